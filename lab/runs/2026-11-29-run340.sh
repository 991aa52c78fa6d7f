#!/usr/bin/env bash
# Run 340 (issue 42, small decode): decode at D = 128 with four key groups
# of one K/V stage (working tree on top of the COMMIT in the bundle):
# correctness, ncu kernel times and the decode benches against main
# (29b0cb0's sdpa). Predictions: lab/predictions/2026-11-29-predictions-run340.md.
#   carry: gpu-bundle-diag/r340
set -uo pipefail
W=/tmp/logs340; rm -rf $W; mkdir -p $W /tmp/b340
for f in gpu-bundle-diag/r340/*.xz; do b=$(basename $f .xz); xz -dc $f > /tmp/b340/$b; chmod +x /tmp/b340/$b; done
S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader > $S
R="--ignored --nocapture --test-threads=1"
pack() { tar czf $OUT/logs.tgz -C $W . ; }
timeout 120 env SDPA_GATE_VARIANTS=decode /tmp/b340/gpu_gate $R > $W/gate.log 2>&1; echo "gate decode rc=$? $(grep -E 'passed, .* failed' $W/gate.log | tail -1)" >> $S
for t in window device_api layouts strides; do
  timeout 90 /tmp/b340/$t $R > $W/$t.log 2>&1; echo "$t rc=$? $(grep -E 'test result' $W/$t.log | tail -1)" >> $S
done
grep -hE "panicked" -A3 $W/*.log | head -8 >> $S
pack
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
for x in sdpa main-sdpa; do
  for skv in 4096 16384; do
    timeout 60 "$NCU" --clock-control none --metrics gpu__time_duration.sum --csv \
      /tmp/b340/$x bench --shapes 1,32:8,1:$skv,128 --variants decode --modes direct --samples 3 --launches 4 > $W/ncu-$x-$skv.csv 2> /dev/null
    python3 - $W/ncu-$x-$skv.csv $x $skv >> $S <<'PY'
import csv, sys, collections
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
head = rows[0]; k = head.index("Kernel Name"); v = head.index("Metric Value")
t = collections.defaultdict(list)
for r in rows[1:]:
    try: t[r[k].split("(")[0]].append(float(r[v].replace(",", "")))
    except ValueError: pass
print(sys.argv[2], sys.argv[3], "; ".join(f"{n} {sorted(x)[len(x)//2]/1000:.2f} us" for n, x in t.items()))
PY
  done
done
pack
for round in 1 2; do
  for x in sdpa main-sdpa; do
    timeout 60 /tmp/b340/$x bench --shapes 1,32:8,1:4096,128 1,32:8,1:16384,128 --variants decode --modes graph,graph-overlap > $W/small-$x-$round.log 2>&1
    echo "== $x small round $round rc=$?" >> $S; grep -E "^decode" $W/small-$x-$round.log | cut -c1-100 >> $S
  done
done
pack
for x in sdpa main-sdpa; do
  timeout 90 /tmp/b340/$x bench --shapes 64,32:8,1:8192,128 8,32:8,1:32768,128 64,32:8,16:8192,128 --variants decode --modes graph > $W/big-$x.log 2>&1
  echo "== $x big rc=$?" >> $S; grep -E "^decode" $W/big-$x.log | cut -c1-100 >> $S
done
pack
timeout 100 /tmp/b340/gpu_fuzz $R > $W/fuzz.log 2>&1; echo "gpu_fuzz rc=$? $(grep -E 'test result' $W/fuzz.log | tail -1); decode entries: $(grep -cE 'decode.*passed' $W/fuzz.log)" >> $S
grep -E "decode" $W/fuzz.log | head -6 >> $S
pack
echo "elapsed ${SECONDS}s" >> $S
cat $S
