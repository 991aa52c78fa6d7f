#!/usr/bin/env bash
# Run 132: A/B chain old / new / kv1 (see results/2026-11-25-predictions-run132.md).
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $OUT/gpu.txt
SHAPES="2,16,8192,64 2,16,8192,64,causal 4,16,2048,64 2,8,256,64 1,8,512,64"
mkdir -p $OUT/ab
OUT=$OUT/ab ROUNDS=2 STEP_TIMEOUT=240 bash scripts/ab-chain.sh split,split-n64,split-wg "$SHAPES" graph \
  old=gpu-bundle-diag/r131/sdpa-old new=gpu-bundle/bin/sdpa kv1=gpu-bundle-diag/r132/sdpa-kv1 > $OUT/ab.log 2>&1
tar czf $OUT/ab-json.tgz -C $OUT ab && rm -rf $OUT/ab
grep -A16 "^variant  shape" $OUT/ab.log
