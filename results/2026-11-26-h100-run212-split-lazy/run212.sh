#!/usr/bin/env bash
# Run 212 (session 24), on 02f39cf's bundle: (1) stage 139, `split-n64`
# D = 64 with stage 138's lazy maxima and fast path (experiment builds
# gpu-bundle-diag/r212/A: compares on every block; B: none on a warp's
# first block), A/B chain base -> A -> B -> base2; (2) stage 140, run 198's
# 35 shapes nearest `wgmma`'s boundary timed again with every tiled
# variant for scripts/check-picks.py (stage 138 made `wgmma` 2.5-7% faster).
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader | tee $OUT/gpu.txt
mkdir -p $OUT/ab
SHAPES="2,8,256,64 1,8,512,64 2,8,256,64,causal 4,8,512,64 1,8,1024,64 1,8,2048,64 1,1,1,64"
OUT=$OUT/ab ROUNDS=5 STEP_TIMEOUT=100 bash scripts/ab-chain.sh split-n64 "$SHAPES" graph \
  base=gpu-bundle/bin/sdpa A=gpu-bundle-diag/r212/A/sdpa B=gpu-bundle-diag/r212/B/sdpa base2=gpu-bundle/bin/sdpa > $OUT/ab.log 2>&1
tar czf $OUT/ab-json.tgz -C $OUT ab && rm -rf $OUT/ab
echo "A/B: ok $(grep -c ' ok$' $OUT/ab.log), FAIL $(grep -c FAIL $OUT/ab.log); ${SECONDS}s"
grep -A9 "^variant  shape" $OUT/ab.log | cut -c1-180
# shellcheck disable=SC2046
timeout 280 gpu-bundle/bin/sdpa bench --variants mma,wgmma,split,split-wg,split-n64 \
  --shapes $(cat results/2026-11-26-h100-run198-picks/shapes.txt) \
  --modes graph --samples 10 --json $OUT/picks.json > $OUT/picks.txt 2>&1
echo "rows ok: $(grep -cE ' ok$' $OUT/picks.txt), FAIL: $(grep -c FAIL $OUT/picks.txt)"
echo "elapsed ${SECONDS}s"
