#!/usr/bin/env bash
# Run 112: what 127 more blocks cost at one key (mma, split, split-wg), and
# the tensor maps replicated 32 times (one copy per block mod 32) against
# the record build. Predictions: results/2026-11-25-predictions-run112.md.
set -uo pipefail
B=gpu-bundle/bin/sdpa
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm > $OUT/device.txt 2>&1
for r in 1 2; do
  timeout 120 $B bench --variants mma,split,split-wg --shapes 1,1,1,64 1,8,1,64 1,32,1,64 1,128,1,64 --modes graph --json $OUT/blocks-$r.json > $OUT/blocks-$r.txt 2>&1
done
OUT=$OUT ROUNDS=2 bash scripts/ab-chain.sh split,split-wg "1,1,1,64 1,128,1,64 2,8,256,64 1,8,512,64 4,8,256,64 1,8,1024,128" graph \
  base=$B rep=gpu-bundle-diag/r112/sdpa-rep > $OUT/ab.txt 2>&1
grep -hE "^(mma|split)" $OUT/blocks-1.txt $OUT/blocks-2.txt | cut -c1-75
tail -16 $OUT/ab.txt
