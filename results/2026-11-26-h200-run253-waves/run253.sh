#!/usr/bin/env bash
# Run 253 (session 29): three measurements on one bundle, no new kernel
# (predictions: results/2026-11-26-predictions-run253.md).
# 1. Wave quantization of the long D = 128 rows: `wgmma` (192-row blocks,
#    one per SM) and `wgmma-fp8pv`'s 192-key kernel (128-row blocks, one
#    per SM) at key lengths on both sides of a whole number of waves.
# 2. `wgmma` (1,16,16384,128), whose samples were bimodal in record -14,
#    timed four more times.
# 3. The causal threshold of `wgmma-fp8pv`'s 192-key kernel at 9216 keys
#    (10240 again as the control): run 251's builds, main = stage 153
#    (three-warpgroup kernel on causal rows under 16384 keys), all = the
#    192-key kernel on every D = 128 row of 2048+ keys.
set -uo pipefail
E=gpu-bundle-diag/r253
nvidia-smi --query-gpu=name,serial,driver_version,clocks.max.sm --format=csv,noheader | tee $OUT/gpu.txt
timeout 200 $E/sdpa bench --variants wgmma --modes graph --json $OUT/wq-wgmma.json \
  --shapes 1,16,15616,128 1,16,16128,128 1,16,16384,128 1,16,16896,128 1,16,17408,128 | grep -v '^\['
timeout 200 $E/sdpa bench --variants wgmma-fp8pv --modes graph --json $OUT/wq-fp8pv.json \
  --shapes 1,16,15744,128 1,16,16384,128 1,16,16896,128 1,16,17024,128 | grep -v '^\['
for i in 1 2 3 4; do
  timeout 60 $E/sdpa bench --variants wgmma --modes graph --samples 40 --json $OUT/bimodal-$i.json \
    --shapes 1,16,16384,128 | grep -E "^wgmma"
done
ROWS="1,16,9216,128,causal 1,16,10240,128,causal"
ROUNDS=3 STEP_TIMEOUT=90 bash scripts/device-run.sh ab wgmma-fp8pv "$ROWS" main=$E/sdpa-main all=$E/sdpa-all main2=$E/sdpa-main
echo "elapsed ${SECONDS}s"
