#!/usr/bin/env bash
# Run 130: stage 85 A/B (K and V on their own barriers), old = the build of
# a619ed9 (gpu-bundle/bin/sdpa), new = gpu-bundle-diag/r130/sdpa-kv.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $OUT/gpu.txt
SHAPES="2,8,256,64 1,8,512,64 1,8,512,64,causal 1,1,1,64 1,8,1024,64 1,4,2048,64 1,8,512,128 2,8,512,128 1,4,1024,64 4,8,512,64"
mkdir -p $OUT/ab
OUT=$OUT/ab ROUNDS=2 STEP_TIMEOUT=200 bash scripts/ab-chain.sh split,split-n64,split-wg "$SHAPES" graph \
  old=gpu-bundle/bin/sdpa new=gpu-bundle-diag/r130/sdpa-kv > $OUT/ab.log 2>&1
tar czf $OUT/ab-json.tgz -C $OUT ab && rm -rf $OUT/ab
grep -A40 "^variant  shape" $OUT/ab.log
