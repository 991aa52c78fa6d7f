#!/usr/bin/env bash
# Run 231 (session 25): the reviewed build (6e6c790; wgmma-fp8pv's sums in
# Rows, its prologue reordered): the gate, then wgmma and wgmma-fp8pv at
# two long rows. Written before the run: gate 462/462, wgmma-fp8pv
# rel_l2 <= 2.8e-2, its ratio to wgmma as run 228's within 1.5%.
set -uo pipefail
E=gpu-bundle-diag/r231
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader | tee $OUT/gpu.txt
timeout 300 $E/gpu_gate --ignored --nocapture --test-threads=1 > $OUT/gate.log 2>&1; echo "gate rc=$?"
grep -E "passed, .* failed" $OUT/gate.log | tail -1
grep "^\[wgmma-f" $OUT/gate.log | grep -o "rel_l2=[0-9.e+-]*" | sort -t= -k2 -g | sed -n '1p;$p'
timeout 150 $E/sdpa bench --variants wgmma,wgmma-fp8pv --shapes 1,16,16384,128 4,16,4096,128 --modes graph > $OUT/bench.txt 2>&1
grep -E "^wgmma" $OUT/bench.txt
echo "elapsed ${SECONDS}s"
