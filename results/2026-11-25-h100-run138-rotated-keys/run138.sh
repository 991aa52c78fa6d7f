#!/usr/bin/env bash
# Run 138: stage 90 A/B (each query block starts its key walk at a rotated
# key block): base = the build of 14402d3, rot = this tree.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $OUT/gpu.txt
SHAPES="2,8,256,64 1,8,512,64 1,8,512,64,causal 2,8,256,64,causal 1,1,1,64 1,1,512,64 1,8,1024,64 4,8,512,64 1,8,256,128 1,8,512,128 2,16,2048,64"
mkdir -p $OUT/ab
B=gpu-bundle-diag/r138
OUT=$OUT/ab ROUNDS=3 STEP_TIMEOUT=200 bash scripts/ab-chain.sh split-n64,split,split-wg "$SHAPES" graph \
  base=$B/sdpa-base rot=$B/sdpa-rot > $OUT/ab.log 2>&1
tar czf $OUT/ab-json.tgz -C $OUT ab && rm -rf $OUT/ab
grep -c " ok$" $OUT/ab.log; grep -c "FAIL" $OUT/ab.log
grep -A40 "^variant  shape" $OUT/ab.log
