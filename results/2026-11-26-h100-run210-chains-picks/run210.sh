#!/usr/bin/env bash
# Run 210 (session 24), on d037d81's bundle: (1) stage 136, `wgmma` D = 64
# with its row maxima folded as four chains (experiment build
# gpu-bundle-diag/r209/c4/sdpa), A/B chain base -> c4 -> base2; (2) stage
# 137, run 198's 35 shapes nearest `wgmma`'s boundary timed again with
# every tiled variant for scripts/check-picks.py (stage 135 made `wgmma`
# 2.5% faster at (4,16,1024,128)).
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader | tee $OUT/gpu.txt
mkdir -p $OUT/ab
SHAPES="4,16,2048,64 2,16,8192,64 2,16,8192,64,causal 8,16,512,64 4,16,1024,64 1,8,2048,64"
OUT=$OUT/ab ROUNDS=4 STEP_TIMEOUT=100 bash scripts/ab-chain.sh wgmma "$SHAPES" graph \
  base=gpu-bundle/bin/sdpa c4=gpu-bundle-diag/r209/c4/sdpa base2=gpu-bundle/bin/sdpa > $OUT/ab.log 2>&1
tar czf $OUT/ab-json.tgz -C $OUT ab && rm -rf $OUT/ab
echo "A/B: ok $(grep -c ' ok$' $OUT/ab.log), FAIL $(grep -c FAIL $OUT/ab.log); ${SECONDS}s"
grep -A8 "^variant  shape" $OUT/ab.log | cut -c1-150
# shellcheck disable=SC2046
timeout 280 gpu-bundle/bin/sdpa bench --variants mma,wgmma,split,split-wg,split-n64 \
  --shapes $(cat results/2026-11-26-h100-run198-picks/shapes.txt) \
  --modes graph --samples 10 --json $OUT/picks.json > $OUT/picks.txt 2>&1
echo "rows ok: $(grep -cE ' ok$' $OUT/picks.txt), FAIL: $(grep -c FAIL $OUT/picks.txt)"
echo "elapsed ${SECONDS}s"
