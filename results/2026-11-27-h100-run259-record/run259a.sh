#!/usr/bin/env bash
# Run 259, call a (session 30): the first half of a record of main with the
# bf16 twins and device inputs (predictions: results/2026-11-27-predictions-run259.md):
# the correctness gate (742 cases), overlap (60 pairs) and GPU fuzz (30
# kernels) into $OUT/rec, then the device_inputs test. The bundle travels as
# one xz archive (see README, GPU tests).
set -uo pipefail
tar xJf gpu-bundle-diag/r259/gb.tar.xz
OUT=$OUT/rec STEP_TIMEOUT=450 bash scripts/gpu-run.sh gate fuzz | tail -12
timeout 120 gpu-bundle/bin/device_inputs --ignored --nocapture --test-threads=1 >"$OUT/device_inputs.log" 2>&1
echo "device_inputs exit $?"; grep -E "identical|checked|test result" "$OUT/device_inputs.log" | tail -9
nvidia-smi --query-gpu=name,serial,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
tar czf "$OUT/rec-a.tgz" -C "$OUT" rec && rm -r "$OUT/rec"
echo "elapsed ${SECONDS}s"
