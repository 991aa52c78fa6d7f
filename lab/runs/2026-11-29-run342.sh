#!/usr/bin/env bash
# Run 342 (issue 42, small decode): run 341's per-kernel times and stall
# sites again with warm caches (ncu --cache-control none, the first launches
# skipped). (Its first attempt skipped too many launches and named ncu's
# sampling option wrongly; the graph floors came from it.) Main's build.
# Predictions: lab/predictions/2026-11-29-predictions-run342.md.
#   carry: gpu-bundle-diag/r341 (sdpa)
set -uo pipefail
W=/tmp/logs342; rm -rf $W; mkdir -p $W /tmp/b342
xz -dc gpu-bundle-diag/r341/sdpa.xz > /tmp/b342/sdpa; chmod +x /tmp/b342/sdpa
S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader > $S
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
B=/tmp/b342/sdpa
echo "== warm per-kernel times (ncu, cache-control none, the first 6 launches skipped)" >> $S
for skv in 64 256 4096 16384; do
  timeout 90 "$NCU" --clock-control none --cache-control none --metrics gpu__time_duration.sum --csv -s 6 -c 24 \
    $B bench --shapes 1,32:8,1:$skv,128 --variants decode --modes direct --samples 10 --launches 20 > $W/t-$skv.csv 2> $W/t-$skv.err
  python3 - $W/t-$skv.csv $skv >> $S <<'PY'
import csv, sys, collections
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
head = rows[0]; k = head.index("Kernel Name"); v = head.index("Metric Value")
t = collections.defaultdict(list)
for r in rows[1:]:
    try: t[r[k].split("(")[0]].append(float(r[v].replace(",", "")) / 1000)
    except ValueError: pass
print(f"Skv {sys.argv[2]}: " + "; ".join(f"{n} n={len(x)} median {sorted(x)[len(x)//2]:.2f} us min {min(x):.2f}" for n, x in t.items()))
PY
done
echo "== warm stall sites, 4096 keys" >> $S
for k in sdpa_decode_d128 sdpa_decode_merge_d128; do
  timeout 120 "$NCU" --clock-control none --cache-control none --warp-sampling-interval 0 --section SourceCounters --section WarpStateStats \
    -k regex:"^$k\$" -s 6 -c 1 -o $W/$k -f $B bench --shapes 1,32:8,1:4096,128 --variants decode --modes direct --samples 3 --launches 20 > $W/$k.log 2>&1
  "$NCU" -i $W/$k.ncu-rep --page source --csv --print-source sass > $W/$k-sass.csv 2>> $W/$k.log
  python3 - $W/$k-sass.csv $k >> $S <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))[1:]
head, body = rows[0], rows[1:]
src, smp = head.index("Source"), head.index("Warp Stall Sampling (All Samples)")
num = lambda x: float(x.replace(",", "")) if x.replace(",", "").replace(".", "").isdigit() else 0.0
tot = sum(num(r[smp]) for r in body)
print(f"{sys.argv[2]}: {tot:.0f} samples, {len(body)} instructions; top 15 (index, samples, share)")
for i in sorted(sorted(range(len(body)), key=lambda i: -num(body[i][smp]))[:15]):
    print(f"{i:5d} {num(body[i][smp]):6.0f} {100*num(body[i][smp])/max(tot,1):5.1f}%  {body[i][src].strip()[:80]}")
PY
done
echo "== graph floors (done in the first call)" >> $S
tar czf $OUT/logs.tgz -C $W --exclude='*.ncu-rep' .
echo "elapsed ${SECONDS}s" >> $S
cat $S
