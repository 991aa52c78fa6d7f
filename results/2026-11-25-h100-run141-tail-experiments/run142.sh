#!/usr/bin/env bash
# Run 142: cumulative experiments on split-n64's step, A/B chain against
# the build of 5989953 (base): c4 (four chains where S_TILES = 8 and not
# warpgroup Q·Kᵀ), skip1 (+ no rescale after the first block), lazy (+
# lazy maxima and a skipped rescale for split-n64), fused (skip1 + the
# fused exponent where the host allows it). Patches next to this script.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $OUT/gpu.txt
SHAPES="2,8,256,64 1,8,512,64 1,8,512,64,causal 1,1,1,64 4,8,512,64 1,8,1024,64 1,8,384,64 2,8,640,64 1,8,512,128 2,8,256,128"
mkdir -p $OUT/ab
B=gpu-bundle-diag/r142
OUT=$OUT/ab ROUNDS=4 STEP_TIMEOUT=200 bash scripts/ab-chain.sh split-n64,split "$SHAPES" graph \
  base=$B/sdpa-base c4=$B/sdpa-c4 skip1=$B/sdpa-skip1 lazy=$B/sdpa-lazy fused=$B/sdpa-fused > $OUT/ab.log 2>&1
tar czf $OUT/ab-json.tgz -C $OUT ab && rm -rf $OUT/ab
grep -c " ok$" $OUT/ab.log; grep -c "FAIL" $OUT/ab.log
grep -A60 "^variant  shape" $OUT/ab.log
