#!/usr/bin/env bash
# run 77 (bundle of stage 51): compute-sanitizer x4, adversarial, determinism (issue3);
# the 12 out-of-sample shapes of results/2026-11-25-predictions-run77.md (every variant, graph);
# ncu of wgmma at (4,16,4096,128) with pipe utilization and source-level stalls.
set -uo pipefail
export OUT=${OUT:-gpu-out}
B=gpu-bundle/bin/sdpa
OOS="2,8,512,64 1,8,768,64 4,8,512,64 2,16,512,64 4,16,384,64 2,8,1024,128 1,4,1024,128 1,8,768,128 2,12,768,128 8,16,384,128 2,16,2048,128,causal 1,6,1536,128"
timeout 200 $B bench --variants mma,wgmma,split --shapes $OOS --modes graph --json $OUT/oos.json > $OUT/oos.txt 2>&1
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
rep=/tmp/wgmma-ncu
timeout 300 "$NCU" --clock-control none --cache-control none --warp-sampling-interval 0 -k "regex:sdpa_wgmma_d" -c 1 --launch-skip 3 \
  --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section InstructionStats \
  --section ComputeWorkloadAnalysis --section SourceCounters --section LaunchStats --section Occupancy \
  --metrics smsp__inst_executed.sum,sm__cycles_active.avg,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active,smsp__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active,smsp__inst_executed_pipe_alu.avg.pct_of_peak_sustained_active \
  --export "$rep" -f $B bench --variants wgmma --shapes 4,16,4096,128 --modes direct --samples 1 --launches 4 >/dev/null 2>&1
"$NCU" --import "$rep.ncu-rep" --page details > "$OUT/wgmma-ncu.txt" 2>&1
"$NCU" --import "$rep.ncu-rep" --page source --print-source sass --csv > "$OUT/wgmma-sass.csv" 2>&1
STEP_TIMEOUT=240 bash scripts/gpu-run.sh issue3 > $OUT/run.log 2>&1
tail -12 $OUT/run.log
grep -v '^\[' $OUT/oos.txt | awk '{print $1, $2, $4}'
grep -E "Duration|Warp Cycles Per Issued|Issue Slots Busy|pipe|Pipe|Tensor|tensor|XU|FMA " $OUT/wgmma-ncu.txt | head -40
