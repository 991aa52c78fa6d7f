#!/usr/bin/env bash
# Run 119 (stage 81): split's tensor copies issued before the block barrier
# (experiment build) against the record build, A/B chain, 3 rounds.
# Predictions: results/2026-11-25-predictions-run119.md.
set -uo pipefail
OUT=$OUT ROUNDS=2 bash scripts/ab-chain.sh split,split-wg "1,1,1,64 1,128,1,64 2,8,256,64 1,8,512,64 2,8,256,128 1,8,512,128 1,8,1024,64 4,8,256,64" graph \
  base=gpu-bundle/bin/sdpa early=gpu-bundle-diag/r119/sdpa-early proxy=gpu-bundle-diag/r119/sdpa-early-proxy > $OUT/ab.txt 2>&1
(cd $OUT && tar cf ab.tar ab-*.json && rm ab-*.json)
grep -E "FAIL|rror" $OUT/ab.txt | head
tail -18 $OUT/ab.txt
