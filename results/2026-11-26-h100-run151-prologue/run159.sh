#!/usr/bin/env bash
# Run 159 (session 17): stage 108, the merge's slice with V's scale after the
# group sum and balanced folds (mergetree.patch), chained with the base timed
# again last; split-n64 and split at D = 64 and D = 128.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $OUT/gpu.txt
B=gpu-bundle-diag/r152
mkdir -p $OUT/ab
SHAPES="2,8,256,64 1,8,512,64 1,8,512,64,causal 1,1,1,64 4,8,512,64 1,8,1024,64 2,8,256,128 1,8,512,128"
OUT=$OUT/ab ROUNDS=5 STEP_TIMEOUT=100 bash scripts/ab-chain.sh split-n64,split "$SHAPES" graph \
  base=$B/sdpa-base mtree=$B/sdpa-mtree base2=$B/sdpa-base > $OUT/ab.log 2>&1
tar czf $OUT/ab-json.tgz -C $OUT ab && rm -rf $OUT/ab
echo "A/B: ok $(grep -c ' ok$' $OUT/ab.log), FAIL $(grep -c FAIL $OUT/ab.log)"
grep -A60 "^variant  shape" $OUT/ab.log
