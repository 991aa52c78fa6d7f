#!/usr/bin/env bash
# Run 181 (session 19): where stage 121b's early group copies lose.
# Nsight Compute, one launch each: the run-176 stall metrics for base, k0
# (121) and k0b (121b) at (1,8,512,64) and (1,1,1,64), then per-instruction
# stall samples (source page, SASS) of base and k0b at both shapes.
set -uo pipefail
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader | tee $OUT/gpu.txt
B=gpu-bundle-diag/r180
S=smsp__average_warps_issue_stalled
M=sm__cycles_active.avg,gpu__time_duration.sum,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active
for r in no_instruction long_scoreboard short_scoreboard wait math_pipe_throttle mio_throttle dispatch_stall not_selected selected barrier branch_resolving lg_throttle membar sleeping; do
  M=$M,${S}_${r}_per_issue_active.ratio
done
RUN="bench --variants split-n64 --modes direct --samples 1 --launches 4"
for s in 1,8,512,64 1,1,1,64; do
  for b in base=$B/sdpa-base k0=$B/sdpa-k0 k0b=$B/k0b/sdpa; do
    echo "== ${b%%=*} $s"
    timeout 120 $NCU --clock-control none -k regex:sdpa_split_n64_d -c 1 --launch-skip 3 --metrics $M \
      ${b#*=} $RUN --shapes $s 2>&1 | grep -E "sm__|smsp__|gpu__|ERR" | sed -E 's/smsp__average_warps_issue_stalled_//; s/_per_issue_active.ratio//'
  done
done > $OUT/metrics.txt
for s in 1,8,512,64 1,1,1,64; do
  for b in base=$B/sdpa-base k0b=$B/k0b/sdpa; do
    tag=${b%%=*}-${s//,/_}
    timeout 200 $NCU --clock-control none --cache-control none --warp-sampling-interval 0 -k regex:sdpa_split_n64_d -c 1 --launch-skip 3 \
      --section SourceCounters --export /tmp/$tag -f ${b#*=} $RUN --shapes $s > /tmp/$tag.log 2>&1 || tail -3 /tmp/$tag.log
    $NCU --import /tmp/$tag.ncu-rep --page source --print-source sass --csv > $OUT/$tag-sass.csv 2>&1
  done
done
grep -E "^==|duration|cycles_active|inst_executed|long_scoreboard|barrier|wait " $OUT/metrics.txt | head -60
ls -la $OUT
