#!/usr/bin/env bash
# Run 379 (issue 39): where `wgmma-fp8pv` D = 128 should switch to its
# 192-key kernel now that both kernels are warp-specialized and take K by
# tensor copies: the current build (`sdpa`, the switch at 2048 keys,
# 10240 causal) against one that never switches (`short-sdpa`), at B x S
# = 16384, H = 16, three rounds alternated.
# Predictions: lab/predictions/2026-11-29-predictions-run379.md.
#   carry: gpu-bundle-diag/r379 (sdpa, short-sdpa)
set -uo pipefail
W=/tmp/logs379; rm -rf $W; mkdir -p $W /tmp/b379
for b in sdpa short-sdpa; do xz -dc gpu-bundle-diag/r379/$b.xz > /tmp/b379/$b; chmod +x /tmp/b379/$b; done
S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader > $S
SHAPES="8,16,2048,128 4,16,4096,128 2,16,8192,128 1,16,16384,128 4,16,4096,128,causal 2,16,8192,128,causal 1,16,16384,128,causal 1,16,32768,128,causal"
for round in 1 2 3; do
  for x in sdpa short-sdpa; do
    timeout 80 /tmp/b379/$x bench --shapes $SHAPES --variants wgmma-fp8pv --modes graph > $W/bench-$x-$round.log 2>&1
    echo "== $x round $round rc=$? $(grep -E "^wgmma" $W/bench-$x-$round.log | awk '{print $2, $5}' | tr '\n' ';')" >> $S
  done
done
tar czf $OUT/logs.tgz -C $W .
echo "elapsed ${SECONDS}s" >> $S
cat $S
