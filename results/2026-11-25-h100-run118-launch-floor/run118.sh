#!/usr/bin/env bash
# Run 118: the launch floor of split's configuration (empty-kernel build with
# environment overrides of threads and dynamic shared memory) next to the
# record build and the torch one-element floor.
# Predictions: results/2026-11-25-predictions-run118.md.
set -uo pipefail
E=gpu-bundle-diag/r118/sdpa-empty
S="1,1,1,64 1,128,1,64 2,8,256,64"
for r in 1 2; do
  echo "== round $r"
  gpu-bundle/bin/sdpa bench --variants split --shapes $S --modes graph | grep -E "^split" | sed 's/^/record /'
  $E bench --variants split --shapes $S --modes graph | grep -E "^split" | sed 's/^/empty-256t-44720B /'
  SDPA_EXP_SMEM=0 $E bench --variants split --shapes $S --modes graph | grep -E "^split" | sed 's/^/empty-256t-0B /'
  SDPA_EXP_THREADS=32 $E bench --variants split --shapes $S --modes graph | grep -E "^split" | sed 's/^/empty-32t-44720B /'
  SDPA_EXP_THREADS=32 SDPA_EXP_SMEM=0 $E bench --variants split --shapes $S --modes graph | grep -E "^split" | sed 's/^/empty-32t-0B /'
done 2>&1 | cut -c1-95 | tee $OUT/run118.txt
timeout 120 python3 scripts/peers.py 2,8,256,64 > $OUT/peers.jsonl 2>/dev/null
python3 scripts/peers.py --summarize $OUT/peers.jsonl | grep -E "floor|cudnn" | tee -a $OUT/run118.txt
