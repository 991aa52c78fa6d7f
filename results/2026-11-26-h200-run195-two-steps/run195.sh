#!/usr/bin/env bash
# Run 195 (session 21): stage 129 ("two": split-n64 D = 64 with a group's
# two key-block steps written out when it has exactly two blocks and no
# refill, so ptxas interleaves step 1's Q·K^T with step 0's softmax and
# P·V). Chain base -> two -> base2, 5 rounds, then two's checks.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader | tee $OUT/gpu.txt
B=gpu-bundle-diag/r195
mkdir -p $OUT/ab
SHAPES="2,8,256,64 1,8,512,64 1,8,512,64,causal 1,1,1,64 4,8,512,64 1,8,384,64 1,8,1024,64 1,8,2048,64"
OUT=$OUT/ab ROUNDS=5 STEP_TIMEOUT=100 bash scripts/ab-chain.sh split-n64 "$SHAPES" graph \
  base=$B/sdpa-base two=$B/two/sdpa base2=$B/sdpa-base > $OUT/ab.log 2>&1
tar czf $OUT/ab-json.tgz -C $OUT ab && rm -rf $OUT/ab
echo "A/B: ok $(grep -c ' ok$' $OUT/ab.log), FAIL $(grep -c FAIL $OUT/ab.log)"
R="--ignored --nocapture --test-threads=1"
{ timeout 120 $B/two/gpu_gate $R; timeout 80 $B/two/overlap $R; timeout 120 $B/two/gpu_fuzz $R; } > $OUT/checks.log 2>&1
grep -E "test result|pairs checked|FAIL|panicked" $OUT/checks.log | tail -6
grep -A10 "^variant  shape" $OUT/ab.log | cut -c1-170
