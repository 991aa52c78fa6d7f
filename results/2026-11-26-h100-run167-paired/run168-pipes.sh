#!/usr/bin/env bash
# Run 168 (session 18): why stage 112 lost. Pipe counts and utilization of
# split-n64 (one launch) for the base build and the paired build.
set -uo pipefail
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader
M=sm__inst_executed_pipe_alu.sum,sm__inst_executed_pipe_fma.sum,sm__inst_executed_pipe_xu.sum,sm__inst_executed_pipe_lsu.sum,sm__inst_executed_pipe_uniform.sum,sm__inst_executed_pipe_tensor_op_hmma.sum,sm__inst_executed.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,sm__cycles_active.avg,sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_shared_cycles_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active
B=gpu-bundle-diag/r167
for s in 1,8,2048,64 1,8,512,64; do
  for b in $B/sdpa-base $B/exp/sdpa; do
    echo "== $b $s"
    timeout 120 $NCU --clock-control none --cache-control none -k regex:sdpa_split_n64_d -c 1 --launch-skip 3 --metrics $M \
      $b bench --variants split-n64 --shapes $s --modes direct --samples 1 --launches 4 2>&1 | grep -E "sm__|smsp__|ERR"
    timeout 120 $NCU --clock-control none --cache-control none -k regex:sdpa_split_n64_d -c 1 --launch-skip 3 \
      --metrics sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_tensor_op_gmma.sum \
      $b bench --variants split-n64 --shapes $s --modes direct --samples 1 --launches 4 2>&1 | grep -E "sm__|ERR"
  done
done
