#!/usr/bin/env bash
# Run 163 (session 17): stage 110's sweep of ptxas --register-usage-level
# (6..10), chained with the base timed again last.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $OUT/gpu.txt
B=gpu-bundle-diag/r152
mkdir -p $OUT/ab
SHAPES="2,8,256,64 1,8,512,64 1,8,512,64,causal 1,1,1,64 4,8,512,64 1,8,1024,64"
OUT=$OUT/ab ROUNDS=5 STEP_TIMEOUT=100 bash scripts/ab-chain.sh split-n64,split "$SHAPES" graph \
  base=$B/sdpa-base rul6=$B/sdpa-rul6 rul7=$B/sdpa-rul7 rul8=$B/sdpa-rul8 rul9=$B/sdpa-rul9 rul10=$B/sdpa-rul10 base2=$B/sdpa-base > $OUT/ab.log 2>&1
tar czf $OUT/ab-json.tgz -C $OUT ab && rm -rf $OUT/ab
echo "A/B: ok $(grep -c ' ok$' $OUT/ab.log), FAIL $(grep -c FAIL $OUT/ab.log)"
grep -A14 "^variant  shape" $OUT/ab.log | cut -c1-140
