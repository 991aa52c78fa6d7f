#!/usr/bin/env bash
# Run 114 (stage 80): split-wg D = 64 at 128 registers, two blocks per SM
# (experiment build) against the record build. Predictions:
# results/2026-11-25-predictions-run114.md.
set -uo pipefail
OUT=$OUT ROUNDS=2 bash scripts/ab-chain.sh split-wg "2,8,256,64 1,8,512,64 1,8,1024,64 1,12,768,64 5,8,256,64 6,8,256,64 4,16,384,64 1,8,1536,64 4,8,512,64 2,8,2048,64,causal 12,8,256,64 8,16,256,64 4,16,1024,64" graph \
  base=gpu-bundle/bin/sdpa wg2=gpu-bundle-diag/r114/sdpa-wg2 > $OUT/ab.txt 2>&1
(cd $OUT && tar cf ab.tar ab-*.json && rm ab-*.json)
grep -E "FAIL|rror" $OUT/ab.txt | head
tail -14 $OUT/ab.txt
