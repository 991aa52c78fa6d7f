#!/usr/bin/env bash
# Run 330 (issues 41 and 42): (1) quantizer tiles of 16 steps (32 KiB of
# f16, half the tickets again) with LAG_BYTES 32 and 48 MiB against the
# shipped 8 steps / 32 MiB, bits first, times alternated; (2) for the next
# session, a full ncu profile of the small decode's two kernels at
# (1,32:8,1:4096,128) (where its 7.4 + 4.1 us go).
# Predictions: lab/quantizer.md step 5 (after run 329) and
# lab/predictions/2026-11-29-predictions-run330.md.
#   carry: gpu-bundle-diag/r330
set -uo pipefail
W=/tmp/logs330; rm -rf $W; mkdir -p $W /tmp/b330
for f in gpu-bundle-diag/r330/*.xz; do b=$(basename $f .xz); xz -dc $f > /tmp/b330/$b; chmod +x /tmp/b330/$b; done
S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader > $S
R="--ignored --nocapture --test-threads=1"
timeout 60 /tmp/b330/t16lag32-quantizer_gpu $R codes_and_scales three_tensors bad_inputs > $W/bits.log 2>&1
echo "bits t16 rc=$? $(grep -E 'test result' $W/bits.log | tail -1)" >> $S; grep -E "configurations|launches|panicked" $W/bits.log >> $S
for x in t8lag32 t16lag32 t16lag48 t8lag32 t16lag32; do
  timeout 60 /tmp/b330/$x-quantizer_gpu $R quantizer_time > $W/time-$x.log 2>&1
  echo "== $x rc=$?" >> $S; grep -E "^\| [0-9]" $W/time-$x.log | grep -E "H\(q,k\)" >> $S
done
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
timeout 120 "$NCU" --clock-control none --set full -c 2 -o $W/decode -f \
  /tmp/b330/sdpa bench --shapes 1,32:8,1:4096,128 --variants decode --modes direct --samples 1 --launches 1 > $W/decode-ncu.log 2>&1
echo "ncu decode rc=$?" >> $S
"$NCU" -i $W/decode.ncu-rep --page details > $W/decode-details.txt 2>&1
grep -E "^  sdpa_|Duration|DRAM Throughput|Memory Throughput|Achieved Occupancy|Registers Per|Eligible Warps|No Eligible|Warp Cycles Per Issued" $W/decode-details.txt | head -30 >> $S
"$NCU" -i $W/decode.ncu-rep --page raw --csv 2>/dev/null | python3 -c '
import csv, sys
rows = list(csv.reader(sys.stdin))
names = rows[0]
for values in rows[2:]:
    stalls = []
    for n, v in zip(names, values):
        p, s = "smsp__average_warps_issue_stalled_", "_per_issue_active.ratio"
        if n.startswith(p) and n.endswith(s):
            try: stalls.append((float(v.replace(",", "")), n[len(p):-len(s)]))
            except ValueError: pass
    print("stalls: " + ", ".join(f"{k} {v:.2f}" for v, k in sorted(stalls, reverse=True)[:6]))
' >> $S 2>&1
rm -f $W/decode.ncu-rep
tar czf $OUT/logs.tgz -C $W .
echo "elapsed ${SECONDS}s" >> $S
cat $S
