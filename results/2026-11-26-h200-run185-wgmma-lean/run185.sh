#!/usr/bin/env bash
# Run 185 (session 20): stage 125. `lean` = wgmma with its descriptors
# advanced from stage 0's by one add and its mask test a compare with the
# first masked key block (lean.patch). Chain base -> lean -> base2 on
# wgmma, ncu pipe shares of base and lean, then lean's gate, overlap and
# GPU fuzz.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader | tee $OUT/gpu.txt
B=gpu-bundle-diag/r185
mkdir -p $OUT/ab
SHAPES="2,16,8192,64 4,16,2048,64 2,16,8192,64,causal 4,16,4096,128 1,16,16384,128 4,16,4096,128,causal 1,8,1024,64 2,8,256,64 3,8,1000,64,causal"
OUT=$OUT/ab ROUNDS=4 STEP_TIMEOUT=150 bash scripts/ab-chain.sh wgmma "$SHAPES" graph \
  base=$B/sdpa-base lean=$B/lean/sdpa base2=$B/sdpa-base > $OUT/ab.log 2>&1
tar czf $OUT/ab-json.tgz -C $OUT ab && rm -rf $OUT/ab
echo "A/B: ok $(grep -c ' ok$' $OUT/ab.log), FAIL $(grep -c FAIL $OUT/ab.log)"
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
M=sm__cycles_active.avg,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active
for s in 4,16,4096,128 2,16,8192,64; do
  for b in $B/sdpa-base $B/lean/sdpa; do
    echo "== $b $s"
    timeout 150 $NCU --clock-control none -k regex:sdpa_wgmma_d -c 1 --launch-skip 3 --metrics $M \
      $b bench --variants wgmma --shapes $s --modes direct --samples 1 --launches 4 2>&1 | grep -E "sm__|smsp__|ERR"
  done
done > $OUT/ncu.txt 2>&1
cat $OUT/ncu.txt | sed 's/  */ /g'
R="--ignored --nocapture --test-threads=1"
{ timeout 150 $B/lean/gpu_gate $R; timeout 100 $B/lean/overlap $R; } > $OUT/gate.log 2>&1
grep -E "passed, .* failed|pairs checked|FAIL" $OUT/gate.log | tail -6
timeout 150 $B/lean/gpu_fuzz $R > $OUT/fuzz.log 2>&1; tail -3 $OUT/fuzz.log
grep -A30 "^variant  shape" $OUT/ab.log | cut -c1-190
