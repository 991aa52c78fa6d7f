#!/usr/bin/env bash
# Run 374 (issue 39, stage 195b): the producer's Vt writers with byte
# permutes and no per-key test on whole tiles (D = 128 only; D = 64 back
# to the one-role body): old / new alternated twice, timing only.
# Predictions: lab/predictions/2026-11-29-predictions-run374.md.
#   carry: gpu-bundle-diag/r374 (sdpa, old-sdpa = run 372's new)
set -uo pipefail
W=/tmp/logs374; rm -rf $W; mkdir -p $W /tmp/b374
for b in sdpa old-sdpa; do xz -dc gpu-bundle-diag/r374/$b.xz > /tmp/b374/$b; chmod +x /tmp/b374/$b; done
S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader > $S
SHAPES="8,16,1024,128 4,16,4096,128 2,16,4096,128,causal 1,16,16384,128 4,16,2048,64"
for round in 1 2; do
  for x in old-sdpa sdpa; do
    timeout 80 /tmp/b374/$x bench --shapes $SHAPES --variants wgmma,wgmma-fp8pv --modes graph > $W/bench-$x-$round.log 2>&1
    echo "== $x round $round rc=$?" >> $S; grep -E "^wgmma" $W/bench-$x-$round.log | awk '{print $1, $2, $5, $NF}' | tr '\n' ';' >> $S; echo >> $S
  done
done
tar czf $OUT/logs.tgz -C $W .
echo "elapsed ${SECONDS}s" >> $S
cat $S
