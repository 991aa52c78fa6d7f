#!/usr/bin/env bash
# Run 174 (session 18): stage 118, neutral edits (experiment
# build gpu-bundle-diag/r174/exp) against ae0a04e's build, then its checks.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader | tee $OUT/gpu.txt
B=gpu-bundle-diag/r174
mkdir -p $OUT/ab
SHAPES="2,8,256,64 1,8,512,64 1,1,1,64 1,8,1024,64 1,8,2048,64"
OUT=$OUT/ab ROUNDS=5 STEP_TIMEOUT=100 bash scripts/ab-chain.sh split-n64,split "$SHAPES" graph \
  base=$B/sdpa-base n2=$B/sdpa-n2 n3=$B/sdpa-n3 n4=$B/sdpa-n4 base2=$B/sdpa-base > $OUT/ab.log 2>&1
tar czf $OUT/ab-json.tgz -C $OUT ab && rm -rf $OUT/ab
echo "A/B: ok $(grep -c ' ok$' $OUT/ab.log), FAIL $(grep -c FAIL $OUT/ab.log)"
grep -A16 "^variant  shape" $OUT/ab.log | cut -c1-170
