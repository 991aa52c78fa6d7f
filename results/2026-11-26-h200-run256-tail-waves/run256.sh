#!/usr/bin/env bash
# Run 256 (session 29): why stage 156's tail split gained less than the
# wave model says (run 255). `wgmma` at 1536 keys with head counts that
# give one wave, one wave plus a small or a large remainder, and two whole
# waves, main against the split build (now merging its parts in a fixed
# order); then the correctness gate of that build (its repeat check)
# (predictions: results/2026-11-26-predictions-run256.md).
set -uo pipefail
E=gpu-bundle-diag/r255
nvidia-smi --query-gpu=name,serial,driver_version --format=csv,noheader | tee $OUT/gpu.txt
timeout 60 $E/sdpa-split2 bench --variants wgmma --shapes 1,24,1500,64 --modes graph --samples 3 | grep -E "^wgmma" \
  || { echo "smoke run failed"; exit 1; }
ROWS="1,16,1536,128 1,17,1536,128 1,24,1536,128 1,33,1536,128 1,22,1536,64 1,23,1536,64 1,24,1536,64 1,44,1536,64"
ROUNDS=2 STEP_TIMEOUT=120 bash scripts/device-run.sh ab wgmma "$ROWS" main=$E/sdpa-main split=$E/sdpa-split2 main2=$E/sdpa-main
timeout 330 gpu-bundle/bin/gpu_gate --ignored --nocapture --test-threads=1 > $OUT/gate.log 2>&1; echo "gate rc=$?"
grep -E "passed, .* failed" $OUT/gate.log; grep -E "FAIL" $OUT/gate.log | head -6
echo "elapsed ${SECONDS}s"
