#!/usr/bin/env bash
# Run 113 (stage 79): split D = 64 with K/V tiles multicast across clusters of
# query blocks (experiment build, SDPA_EXP_CLUSTER = 1 / 2 / 4) against the
# record build. Predictions: results/2026-11-25-predictions-run113.md.
set -uo pipefail
R=gpu-bundle-diag/r113
OUT=$OUT ROUNDS=2 bash scripts/ab-chain.sh split "2,8,256,64 1,8,512,64 1,1,1,64 1,128,1,64 1,8,1024,64 4,16,256,64 1,4,512,64 2,8,512,64" graph \
  base=gpu-bundle/bin/sdpa mc1=$R/mc1 mc2=$R/mc2 mc4=$R/mc4 > $OUT/ab.txt 2>&1
(cd $OUT && tar cf ab.tar ab-*.json && rm ab-*.json)
grep -E "FAIL|rror" $OUT/ab.txt | head
tail -12 $OUT/ab.txt
