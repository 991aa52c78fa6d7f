#!/usr/bin/env bash
# Run 255 (session 29): stage 156, `wgmma`'s tail split (branch
# `tailsplit`). A 60-s smoke run of the split build first (a hang must not
# eat the call), then the correctness gate of the split build (every
# variant and case, with the new tail-d128 and tail-gqa cases), then the
# A/B chain main -> split -> main2, 2 rounds
# (predictions: results/2026-11-26-predictions-run255.md).
set -uo pipefail
E=gpu-bundle-diag/r255
nvidia-smi --query-gpu=name,serial,driver_version --format=csv,noheader | tee $OUT/gpu.txt
timeout 60 $E/sdpa-split bench --variants wgmma --shapes 2,12,1500,128 1,24,1500,64 --modes graph --samples 3 | grep -E "^wgmma" \
  || { echo "smoke run failed: rc=$?"; exit 1; }
timeout 330 gpu-bundle/bin/gpu_gate --ignored --nocapture --test-threads=1 > $OUT/gate.log 2>&1; echo "gate rc=$?"
grep -E "passed, .* failed" $OUT/gate.log; grep -E "FAIL" $OUT/gate.log | head -10
grep -E "^\[wgmma +tail" $OUT/gate.log | cut -c1-150
ROWS="1,16,16384,128 4,16,4096,128 2,12,1536,128 1,24,1536,64 2,16,8192,64 4,16,2048,64 2,8,256,64 1,8,512,64"
ROUNDS=2 STEP_TIMEOUT=120 bash scripts/device-run.sh ab wgmma "$ROWS" main=$E/sdpa-main split=$E/sdpa-split main2=$E/sdpa-main
echo "elapsed ${SECONDS}s"
