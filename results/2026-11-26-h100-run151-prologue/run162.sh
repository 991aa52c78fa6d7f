#!/usr/bin/env bash
# Run 162 (session 17): stage 110, ptxas --register-usage-level 10 / 8 for
# every entry (rul10.patch, rul8.patch), chained with the base timed again last.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $OUT/gpu.txt
B=gpu-bundle-diag/r152
mkdir -p $OUT/ab $OUT/abl
SHAPES="2,8,256,64 1,8,512,64 1,8,512,64,causal 1,1,1,64 4,8,512,64 1,8,1024,64 2,8,256,128 1,8,512,128"
OUT=$OUT/ab ROUNDS=5 STEP_TIMEOUT=100 bash scripts/ab-chain.sh split-n64,split "$SHAPES" graph \
  base=$B/sdpa-base rul10=$B/sdpa-rul10 rul8=$B/sdpa-rul8 base2=$B/sdpa-base > $OUT/ab.log 2>&1
OUT=$OUT/abl ROUNDS=2 STEP_TIMEOUT=100 bash scripts/ab-chain.sh wgmma "4,16,2048,64 2,16,8192,64" graph \
  base=$B/sdpa-base rul10=$B/sdpa-rul10 rul8=$B/sdpa-rul8 base2=$B/sdpa-base > $OUT/ab-wgmma.log 2>&1
tar czf $OUT/ab-json.tgz -C $OUT ab abl && rm -rf $OUT/ab $OUT/abl
echo "A/B: ok $(cat $OUT/ab.log $OUT/ab-wgmma.log | grep -c ' ok$'), FAIL $(cat $OUT/ab.log $OUT/ab-wgmma.log | grep -c FAIL)"
grep -A30 "^variant  shape" $OUT/ab.log
grep -A5 "^variant  shape" $OUT/ab-wgmma.log
