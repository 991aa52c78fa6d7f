#!/usr/bin/env bash
# Run 196 (session 22): go/no-go for a two-block key split of split-n64.
# Chain base -> proxy -> base2 (proxy: split-n64 D = 64 with 64-row blocks
# of 2 key groups, proxy.patch), 3 rounds, at the shapes of both sides of
# results/2026-11-26-predictions-run196.md.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader | tee $OUT/gpu.txt
B=gpu-bundle-diag/r196
mkdir -p $OUT/ab
SHAPES="1,8,512,64 4,8,256,64 2,8,256,64 8,8,128,64 1,8,1024,64 2,8,512,64 1,1,1,64"
OUT=$OUT/ab ROUNDS=3 STEP_TIMEOUT=100 AB_TIMES_ONLY=1 bash scripts/ab-chain.sh split-n64 "$SHAPES" graph \
  base=$B/sdpa-base proxy=$B/sdpa-proxy base2=$B/sdpa-base > $OUT/ab.log 2>&1
tar czf $OUT/ab-json.tgz -C $OUT ab && rm -rf $OUT/ab
echo "A/B: ok $(grep -c ' ok$' $OUT/ab.log), FAIL $(grep -c FAIL $OUT/ab.log)"
grep -A12 "^variant  shape" $OUT/ab.log | cut -c1-170
