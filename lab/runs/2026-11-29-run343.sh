#!/usr/bin/env bash
# Run 343 (issues 39, 42): the wgmma kernels' time against the keys a
# block walks at a constant block count, to fit a fixed cost per block.
# Predictions: lab/predictions/2026-11-29-predictions-run343.md.
#   carry: gpu-bundle-diag/r341 (sdpa)
set -uo pipefail
W=/tmp/logs343; rm -rf $W; mkdir -p $W /tmp/b343
xz -dc gpu-bundle-diag/r341/sdpa.xz > /tmp/b343/sdpa; chmod +x /tmp/b343/sdpa
S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader > $S
for round in 1 2; do
  timeout 250 /tmp/b343/sdpa bench --shapes 16,16,1024,128 8,16,2048,128 4,16,4096,128 2,16,8192,128 1,16,16384,128 \
    --variants wgmma,wgmma-fp8pv --modes graph > $W/sweep-$round.txt 2>&1
  grep -E "^wgmma" $W/sweep-$round.txt | awk -v r=$round '{print "round " r ": " $1, $2, $5}' >> $S
done
tar czf $OUT/logs.tgz -C $W .
echo "elapsed ${SECONDS}s" >> $S
cat $S
