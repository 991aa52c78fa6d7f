#!/usr/bin/env bash
# Run 190 (session 21): stage 125 (wgmma "lean": descriptors advanced by
# one add, the mask test a compare) timed again on a fresh machine, as a
# replication with its own rule (results/2026-11-26-predictions-run190.md).
# Chain base -> lean -> base2, 5 rounds, then lean's checks.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader | tee $OUT/gpu.txt
B=gpu-bundle-diag/r190
mkdir -p $OUT/ab
SHAPES="2,16,8192,64 4,16,2048,64 2,16,8192,64,causal 4,16,4096,128 1,16,16384,128 4,16,4096,128,causal 1,8,1024,64 2,8,256,64 3,8,1000,64,causal"
OUT=$OUT/ab ROUNDS=5 STEP_TIMEOUT=100 bash scripts/ab-chain.sh wgmma "$SHAPES" graph \
  base=$B/sdpa-base lean=$B/lean/sdpa base2=$B/sdpa-base > $OUT/ab.log 2>&1
tar czf $OUT/ab-json.tgz -C $OUT ab && rm -rf $OUT/ab
echo "A/B: ok $(grep -c ' ok$' $OUT/ab.log), FAIL $(grep -c FAIL $OUT/ab.log)"
R="--ignored --nocapture --test-threads=1"
{ timeout 120 $B/lean/gpu_gate $R; timeout 80 $B/lean/overlap $R; timeout 120 $B/lean/gpu_fuzz $R; } > $OUT/checks.log 2>&1
grep -E "test result|pairs checked|FAIL|panicked" $OUT/checks.log | tail -6
grep -A12 "^variant  shape" $OUT/ab.log | cut -c1-170
