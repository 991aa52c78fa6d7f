#!/usr/bin/env bash
# Run 285, call a (session 33): the first half of a record of main at
# 1a2672d (stage 168c, the pair-row kernel; predictions:
# results/2026-11-27-predictions-run285.md): the correctness gate (798
# cases) and overlap into $OUT/rec, then the device_inputs test. The gate
# alone took 372 s on an H100 (run 283), so the GPU fuzz moves to call b.
set -uo pipefail
tar xJf gpu-bundle-diag/r285/gb.tar.xz
OUT=$OUT/rec STEP_TIMEOUT=480 bash scripts/gpu-run.sh gate | tail -12
timeout 100 gpu-bundle/bin/device_inputs --ignored --nocapture --test-threads=1 >"$OUT/device_inputs.log" 2>&1
echo "device_inputs exit $?"; grep -E "identical|checked|test result" "$OUT/device_inputs.log" | tail -9
nvidia-smi --query-gpu=name,serial,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
tar czf "$OUT/rec-a.tgz" -C "$OUT" rec && rm -r "$OUT/rec"
echo "elapsed ${SECONDS}s"
