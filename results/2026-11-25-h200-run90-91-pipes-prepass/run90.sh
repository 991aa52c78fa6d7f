#!/usr/bin/env bash
# Run 90 (diagnostic, after stage 63): how busy is the tensor pipe? Nsight Compute's pipe
# utilization (raw sm__pipe_* / sm__inst_executed_pipe_* metrics of the ComputeWorkloadAnalysis
# section) for split at the mission shapes (4 groups: sdpa-base; 8 groups: sdpa-g8), mma and
# wgmma at a long shape (mma's plateau of ~253 TFLOP/s = ~970 FLOP/clk/SM: an mma.sync ceiling?).
set -uo pipefail
export OUT=${OUT:-gpu-out}
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
[ -n "$NCU" ] || { echo "ncu: not found"; exit 1; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > "$OUT/device.txt"
prof() { # tag bin variant shape
  local rep=/tmp/$1
  timeout 240 "$NCU" --clock-control none --cache-control none -k "regex:sdpa_$3_d" -c 1 --launch-skip 3 \
    --section SpeedOfLight --section ComputeWorkloadAnalysis --section InstructionStats --section SchedulerStats \
    --metrics sm__cycles_active.avg,smsp__inst_executed.sum,sm__inst_executed_pipe_tensor_op_hmma.sum \
    --export "$rep" -f "$2" bench --variants "$3" --shapes "$4" --modes direct --samples 1 --launches 4 > "$OUT/$1.log" 2>&1
  "$NCU" --import "$rep.ncu-rep" --page raw > "$OUT/$1-raw.txt" 2>&1
  echo "== $1 ($3 $4)"
  grep -E "gpu__time_duration.sum|sm__cycles_active.avg |smsp__issue_active.avg.pct_of_peak_sustained_active|pipe_tensor.*(pct|sum )|sm__inst_executed_pipe_tensor_op_hmma.sum|smsp__inst_executed.sum " "$OUT/$1-raw.txt" | sed 's/  */ /g' | head -24
}
B=gpu-bundle-diag
prof split512 $B/sdpa-base split 1,8,512,64
prof split256 $B/sdpa-base split 2,8,256,64
prof g8-512 $B/sdpa-g8 split 1,8,512,64
prof mma-long $B/sdpa-base mma 2,16,8192,64
prof wgmma-long $B/sdpa-base wgmma 2,16,8192,64
tar cf "$OUT/raw.tar" -C "$OUT" $(cd "$OUT" && ls *-raw.txt *.log) && rm "$OUT"/*-raw.txt "$OUT"/*.log
