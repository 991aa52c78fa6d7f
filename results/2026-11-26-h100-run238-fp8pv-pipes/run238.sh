#!/usr/bin/env bash
# Run 238 (session 26): diagnostic, Nsight Compute pipe metrics of one
# launch each: `wgmma` and `wgmma-fp8pv` of main (sdpa-base, cc3abf0's
# kernels) and stage 149's `wgmma-fp8pv` (sdpa-sums) at (4,16,4096,128),
# and main's two at (1,16,16384,128). Predictions:
# results/2026-11-26-predictions-run238.md.
set -uo pipefail
E=gpu-bundle-diag/r238
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader | tee $OUT/gpu.txt
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
M=sm__cycles_active.avg,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum
prof() {  # build variant shape
  echo "== $1 $2 $3"
  timeout 120 $NCU --clock-control none -k regex:sdpa_wgmma -c 1 --launch-skip 3 --metrics $M \
    $E/$1 bench --variants $2 --shapes $3 --modes direct --samples 1 --launches 4 2>&1 | grep -E "sm__|smsp__|ERR"
}
{ prof sdpa-base wgmma 4,16,4096,128
  prof sdpa-base wgmma-fp8pv 4,16,4096,128
  prof sdpa-sums wgmma-fp8pv 4,16,4096,128
  prof sdpa-base wgmma 1,16,16384,128
  prof sdpa-base wgmma-fp8pv 1,16,16384,128; } > $OUT/ncu.txt 2>&1
cat $OUT/ncu.txt
echo "elapsed ${SECONDS}s"
