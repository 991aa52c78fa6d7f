#!/usr/bin/env bash
# Run 135: stage 87 A/B (split-n64 computes the next block's S before this
# block's softmax): old = the build of 14402d3 (gpu-bundle-diag/r134/sdpa-old),
# ahead (2 stages) and ahead3 (3 stages for split-n64).
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $OUT/gpu.txt
SHAPES="2,8,256,64 1,8,512,64 1,8,512,64,causal 1,1,1,64 1,8,1024,64 1,4,2048,64 4,8,512,64 1,8,256,128 1,8,512,128 2,8,512,128 1,4,1024,128"
mkdir -p $OUT/ab
OUT=$OUT/ab ROUNDS=3 STEP_TIMEOUT=200 bash scripts/ab-chain.sh split-n64,split "$SHAPES" graph \
  old=gpu-bundle-diag/r134/sdpa-old ahead=gpu-bundle-diag/r134/sdpa-ahead ahead3=gpu-bundle-diag/r134/sdpa-ahead3 > $OUT/ab.log 2>&1
tar czf $OUT/ab-json.tgz -C $OUT ab && rm -rf $OUT/ab
grep -c " ok" $OUT/ab.log; grep -iE "fail|error|mismatch" $OUT/ab.log | head
grep -A40 "^variant  shape" $OUT/ab.log
