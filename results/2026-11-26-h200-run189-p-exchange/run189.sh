#!/usr/bin/env bash
# Run 189 (session 21): stage 127. `px` = split-n64 D = 64 with, where
# every key block is resident (<= 512 keys), the groups exchanging row
# maxima and then f16 probabilities, each group computing P·V over all
# keys for its 16 head columns (no partial outputs, no merge);
# `px2` = px with each warp's own key blocks' P·V from registers before
# the exchange's second barrier (PX_OWN_FIRST). Chain base -> px -> px2
# -> base2, then checks of both and sanitizers of px2.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader | tee $OUT/gpu.txt
B=gpu-bundle-diag/r189
mkdir -p $OUT/ab
SHAPES="2,8,256,64 1,8,512,64 1,8,512,64,causal 1,1,1,64 4,8,512,64 2,8,200,64 1,8,384,64 1,8,300,64 1,8,1024,64 1,8,2048,64"
OUT=$OUT/ab ROUNDS=4 STEP_TIMEOUT=100 bash scripts/ab-chain.sh split-n64 "$SHAPES" graph \
  base=$B/sdpa-base px=$B/px/sdpa px2=$B/px2/sdpa base2=$B/sdpa-base > $OUT/ab.log 2>&1
tar czf $OUT/ab-json.tgz -C $OUT ab && rm -rf $OUT/ab
echo "A/B: ok $(grep -c ' ok$' $OUT/ab.log), FAIL $(grep -c FAIL $OUT/ab.log)"
R="--ignored --nocapture --test-threads=1"
for v in px2 px; do
  { timeout 120 $B/$v/gpu_gate $R; timeout 80 $B/$v/overlap $R; timeout 120 $B/$v/gpu_fuzz $R; } > $OUT/checks-$v.log 2>&1
  echo "$v:"; grep -E "test result|pairs checked|FAIL|panicked" $OUT/checks-$v.log | tail -6
done
SAN=$(mktemp -d); OUT=$SAN BIN=$B/px2 SANITIZE_TIMEOUT=100 bash scripts/sanitize.sh racecheck synccheck; cp $SAN/sanitize.log $OUT/
grep -E "ERROR SUMMARY|hazard|error" $OUT/sanitize.log | head -8
grep -A26 "^variant  shape" $OUT/ab.log | cut -c1-200
