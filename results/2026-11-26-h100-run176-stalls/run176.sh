#!/usr/bin/env bash
# Run 176 (session 18): stall reasons of split-n64 at (1,8,2048,64) and
# (2,8,256,64), one launch each, for the base build and three builds that
# lost this session (112 paired, 116 f16 exchange, 119 warp-first).
set -uo pipefail
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader
S=smsp__average_warps_issue_stalled
M=sm__cycles_active.avg,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active
for r in no_instruction long_scoreboard short_scoreboard wait math_pipe_throttle mio_throttle dispatch_stall not_selected selected barrier branch_resolving lg_throttle membar sleeping; do
  M=$M,${S}_${r}_per_issue_active.ratio
done
for s in 1,8,2048,64 2,8,256,64; do
  for b in gpu-bundle-diag/r175/sdpa-base gpu-bundle-diag/r167/exp/sdpa gpu-bundle-diag/r172/exp/sdpa gpu-bundle-diag/r175/exp/sdpa; do
    echo "== $b $s"
    timeout 120 $NCU --clock-control none -k regex:sdpa_split_n64_d -c 1 --launch-skip 3 --metrics $M \
      $b bench --variants split-n64 --shapes $s --modes direct --samples 1 --launches 4 2>&1 | grep -E "sm__|smsp__|ERR" | sed -E 's/smsp__average_warps_issue_stalled_//; s/_per_issue_active.ratio//'
  done
done
