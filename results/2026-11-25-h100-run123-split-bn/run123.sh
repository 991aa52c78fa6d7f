#!/usr/bin/env bash
# Run 123: stage 83 A/B (split D=64 BLOCK_N 32/64/128).
set -u
D=gpu-bundle-diag/r123
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $OUT/gpu.txt
SHAPES="2,8,256,64 1,8,512,64 1,8,512,64,causal 1,1,1,64 1,8,1024,64 1,16,512,64 2,8,512,64 1,8,384,64 1,4,2048,64"
mkdir -p $OUT/ab
OUT=$OUT/ab ROUNDS=2 STEP_TIMEOUT=200 bash scripts/ab-chain.sh split "$SHAPES" graph \
  base=$D/sdpa-base base-u=$D/sdpa-base-u n64=$D/sdpa-n64 n128=$D/sdpa-n128 n128s1=$D/sdpa-n128s1 > $OUT/ab.log 2>&1
tar czf $OUT/ab-json.tgz -C $OUT ab && rm -rf $OUT/ab
tail -14 $OUT/ab.log
