#!/usr/bin/env bash
# Run 257 (session 29): stage 156b, the tail split in entries of its own
# (`sdpa_wgmma_tail_d64/d128`, launch bounds of the main entries' blocks
# per SM), the other entries' PTX as main's, tails of at most half the
# slots. Smoke run, correctness gate (every variant and case, the tail
# cases' repeat check), overlap, then the A/B chain main -> tail -> main2
# (predictions: results/2026-11-26-predictions-run257.md).
set -uo pipefail
E=gpu-bundle-diag/r255
nvidia-smi --query-gpu=name,serial,driver_version --format=csv,noheader | tee $OUT/gpu.txt
timeout 60 $E/sdpa-tail bench --variants wgmma --shapes 2,12,1500,128 1,24,1500,64 --modes graph --samples 3 | grep -E "^wgmma" \
  || { echo "smoke run failed"; exit 1; }
timeout 300 gpu-bundle/bin/gpu_gate --ignored --nocapture --test-threads=1 > $OUT/gate.log 2>&1; echo "gate rc=$?"
timeout 120 gpu-bundle/bin/overlap --ignored --nocapture --test-threads=1 >> $OUT/gate.log 2>&1; echo "overlap rc=$?"
grep -E "passed, .* failed|pairs checked" $OUT/gate.log; grep -E "FAIL" $OUT/gate.log | head -6
ROWS="1,17,1536,128 1,24,1536,128 1,23,1536,64 1,24,1536,64 1,16,16384,128 1,16,1536,128 4,16,4096,128 2,16,8192,64"
ROUNDS=2 STEP_TIMEOUT=120 bash scripts/device-run.sh ab wgmma "$ROWS" main=$E/sdpa-main tail=$E/sdpa-tail main2=$E/sdpa-main
echo "elapsed ${SECONDS}s"
