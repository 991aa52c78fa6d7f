#!/usr/bin/env bash
# Run 387 (issue 42): the small decode's fixed cost in real clocks (graph
# replay, not ncu): decode at B = 1, 32:8 heads, D = 128, one query,
# against the cache length (one block of 2 warps per folded head and
# split), graph and graph-overlap, twice.
# Predictions: lab/predictions/2026-11-29-predictions-run387.md.
#   carry: gpu-bundle-diag/r387 (sdpa: stage 200's build)
set -uo pipefail
mkdir -p /tmp/b387; xz -dc gpu-bundle-diag/r387/sdpa.xz > /tmp/b387/sdpa; chmod +x /tmp/b387/sdpa
S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader > $S
for round in 1 2; do
  timeout 60 /tmp/b387/sdpa bench --shapes 1,32:8,1:32,128 1,32:8,1:64,128 1,32:8,1:128,128 1,32:8,1:256,128 1,32:8,1:1024,128 1,32:8,1:4096,128 1,32:8,1:16384,128 1,8:8,1:64,128 --variants decode --modes graph,graph-overlap > $OUT/bench-$round.log 2>&1
  echo "== round $round rc=$?" >> $S; grep -E "^decode" $OUT/bench-$round.log | awk '{print $2, $4, $5}' >> $S
done
echo "elapsed ${SECONDS}s" >> $S
cat $S
