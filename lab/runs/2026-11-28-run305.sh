#!/usr/bin/env bash
# Run 305 (issue 42): the paged cache against contiguous (bits, then time,
# alone on the GPU), decode's gate cases after the merge's eight-split
# loads, the decode shapes again, torch on the small decode in the same
# run, and one ncu pass over the small decode's two kernels (durations).
# Predictions: lab/predictions/2026-11-28-predictions-run305.md.
set -uo pipefail
B=gpu-bundle/bin
D=gpu-bundle-diag/r305
mkdir -p gpu-bundle && tar xJf $D/gb.tar.xz -C gpu-bundle
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader | tee "$OUT/gpu.txt"
W=$OUT/logs; mkdir -p $W
R="--ignored --nocapture --test-threads=1"
run() { local name=$1; shift; ( timeout 200 "$@" >"$W/$name.log" 2>&1; echo "rc=$?" >>"$W/$name.log" ) & }
run gate env SDPA_GATE_VARIANTS=decode $B/gpu_gate $R
run gate89 env SDPA_IMAGE=sm_89 SDPA_GATE_VARIANTS=decode $B/gpu_gate $R
wait
run api $B/device_api $R; wait
S="64,32:8,1:8192,128 8,32:8,1:32768,128 1,32:8,1:4096,128 64,32:8,16:8192,128"
timeout 150 $B/sdpa bench --shapes $S --variants decode --modes graph,graph-overlap > $W/decode.log 2>&1
timeout 60 python3 scripts/peers.py 1,32:8,1:4096,128 > $W/peers.jsonl 2> /dev/null
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
if [ -n "$NCU" ]; then
  timeout 120 "$NCU" --clock-control none --kernel-name regex:sdpa_decode --launch-count 6 --metrics gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active \
    $B/sdpa bench --shapes 1,32:8,1:4096,128 --variants decode --modes direct --samples 1 > $W/ncu.log 2>&1
fi
{
for f in gate gate89 api; do
  echo "$f: $(grep -E 'passed, .* failed|test result' "$W/$f.log" | tail -2 | tr '\n' ' ') $(tail -1 "$W/$f.log")"
done
grep -hE "FAIL|panicked" $W/gate.log $W/gate89.log $W/api.log | head -6
grep -E "paged|decode causal" $W/api.log
grep -E "copy:|decode " $W/decode.log
python3 scripts/peers.py --summarize $W/peers.jsonl 2>&1 | head -8
grep -E "sdpa_decode|gpu__time|dram__|warps_active" $W/ncu.log | head -30
echo "elapsed ${SECONDS}s"
} | tee $OUT/summary.txt
