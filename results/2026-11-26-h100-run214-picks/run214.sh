#!/usr/bin/env bash
# Run 214 (session 24), on 02f39cf's bundle: stage 140 continued. The 15
# shapes whose stored timings predate stages 135 and 138 and where either
# the rescaled cost model picks otherwise than the current one or `wgmma`
# was within 12% of the winner, timed again with every tiled variant
# (shapes.txt); then compute-sanitizer memcheck and initcheck on the
# bundle's kernels (run 208 and 211 ran racecheck and synccheck only).
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader | tee $OUT/gpu.txt
D=results/2026-11-26-h100-run214-picks
# shellcheck disable=SC2046
timeout 200 gpu-bundle/bin/sdpa bench --variants mma,wgmma,split,split-wg,split-n64 \
  --shapes $(cat $D/shapes.txt) --modes graph --samples 10 --json $OUT/picks.json > $OUT/picks.txt 2>&1
echo "rows ok: $(grep -cE ' ok$' $OUT/picks.txt), FAIL: $(grep -c FAIL $OUT/picks.txt); ${SECONDS}s"
SAN=$(mktemp -d); OUT=$SAN SANITIZE_TIMEOUT=150 bash scripts/sanitize.sh memcheck initcheck; cp $SAN/sanitize.log $OUT/
grep -E "^(memcheck|initcheck)" $OUT/sanitize.log
echo "elapsed ${SECONDS}s"
