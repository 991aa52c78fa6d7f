#!/usr/bin/env bash
# Runs on the GPU machine over a carried `gpu-bundle/`: profiles one launch
# of each variant at one shape with Nsight Compute and writes, per variant,
# $OUT/<variant>-<tag>.txt (speed of light, warp states, scheduler,
# instruction counts) and $OUT/<variant>-<tag>-sass.csv (every SASS
# instruction with its executed count and warp-stall samples: where the
# time of a launch goes).
# Samples every 32 cycles (--warp-sampling-interval 0) with warm caches
# (--cache-control none, as in the graph-timed benchmark).
#   usage: lab/scripts/ncu-source.sh SHAPE TAG VARIANT...   (CLI names: split-n64)
set -uo pipefail
OUT=${OUT:-gpu-out}
mkdir -p "$OUT"
BIN=gpu-bundle/bin
shape=$1 tag=$2
shift 2
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
[ -n "$NCU" ] || { echo "ncu: not found"; exit 1; }
for v in "$@"; do
  rep=/tmp/$v-$tag
  timeout 300 "$NCU" --clock-control none --cache-control none --warp-sampling-interval 0 -k "regex:sdpa_${v//-/_}_d" -c 1 --launch-skip 3 \
    --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section InstructionStats \
    --section SourceCounters --section LaunchStats \
    --metrics smsp__inst_executed.sum,smsp__warps_launched.sum,sm__cycles_active.avg \
    --export "$rep" -f \
    "$BIN/sdpa" bench --variants "$v" --shapes "$shape" --modes direct --samples 1 --launches 4 >"$rep.log" 2>&1 ||
    tail -5 "$rep.log"
  "$NCU" --import "$rep.ncu-rep" --page details >"$OUT/$v-$tag.txt" 2>&1
  "$NCU" --import "$rep.ncu-rep" --page source --print-source sass --csv >"$OUT/$v-$tag-sass.csv" 2>&1
  echo "== $v $shape"
  grep -E "Duration|Elapsed Cycles|Warp Cycles Per Issued|inst_executed.sum|warps_launched.sum|Issue Slots Busy|No Eligible" "$OUT/$v-$tag.txt"
done
