#!/usr/bin/env bash
# Run 341 (issue 42): where the small decode's warps wait (ncu source
# counters, decode and merge), one decode kernel's graph floor, the LSE
# output's cost and the packed ratio, main's build.
# Predictions: lab/predictions/2026-11-29-predictions-run341.md.
#   carry: gpu-bundle-diag/r341 (sdpa, serving_time)
set -uo pipefail
W=/tmp/logs341; rm -rf $W; mkdir -p $W /tmp/b341
for b in sdpa serving_time; do xz -dc gpu-bundle-diag/r341/$b.xz > /tmp/b341/$b; chmod +x /tmp/b341/$b; done
S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader > $S
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
echo "== decode stall sites" >> $S
timeout 200 bash lab/scripts/decode-stall-sites.sh /tmp/b341/sdpa $W >> $S 2>&1
echo "== merge stall sites, 4096 keys" >> $S
timeout 90 "$NCU" --clock-control none --section SourceCounters --section WarpStateStats \
  -k regex:sdpa_decode_merge_d128 -c 1 -o $W/merge -f \
  /tmp/b341/sdpa bench --shapes 1,32:8,1:4096,128 --variants decode --modes direct --samples 1 --launches 1 > $W/merge.log 2>&1
"$NCU" -i $W/merge.ncu-rep --page source --csv --print-source sass > $W/merge-sass.csv 2>> $W/merge.log
python3 - $W/merge-sass.csv >> $S <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
head = rows[0]
col = lambda n: next((i for i, h in enumerate(head) if h.strip().lower().startswith(n)), None)
src, smp = col("source"), col("warp stall sampling (all")
num = lambda x: float(x.replace(",", "")) if x.replace(",", "").replace(".", "").isdigit() else 0.0
top = sorted(rows[1:], key=lambda r: -num(r[smp]))[:15]
tot = sum(num(r[smp]) for r in rows[1:])
print(f"merge: {tot:.0f} samples")
for r in top: print(f"{num(r[smp]):6.0f} {100*num(r[smp])/max(tot,1):5.1f}%  {r[src].strip()[:90]}")
PY
echo "== graph floors" >> $S
timeout 120 /tmp/b341/sdpa bench --shapes "1,32:8,1:64,128 1,32:8,1:256,128 1,32:8,1:4096,128" --variants decode --modes graph,graph-overlap > $W/floors.txt 2>&1
tail -12 $W/floors.txt >> $S
echo "== serving_time" >> $S
timeout 240 /tmp/b341/serving_time --ignored --nocapture --test-threads=1 lse_output_cost packed_batch > $W/serving.txt 2>&1
grep -E "^\||test result|packed|dense" $W/serving.txt | tail -30 >> $S
tar czf $OUT/logs.tgz -C $W --exclude='*.ncu-rep' .
echo "elapsed ${SECONDS}s" >> $S
cat $S
