#!/usr/bin/env bash
# Run 272 (session 31): the GPU adversarial suite with the bf16 twins, and
# determinism, on main's kernels (predictions: results/2026-11-27-predictions-run272.md).
set -uo pipefail
mkdir -p gpu-bundle-diag/r272/bin; tar xJf gpu-bundle-diag/r272/r272.tar.xz -C gpu-bundle-diag/r272/bin
B=gpu-bundle-diag/r272/bin
nvidia-smi --query-gpu=name,serial,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
timeout 400 $B/adversarial --ignored --nocapture --test-threads=1 > "$OUT/adversarial.log" 2>&1; echo "adversarial rc=$?"
grep -E "passed, .* failed|test result" "$OUT/adversarial.log" | tail -3
grep -c "^note:" "$OUT/adversarial.log" | sed 's/^/NaN-position notes: /'
grep "_bf16" "$OUT/adversarial.log" | grep -c "\[" | sed 's/^/bf16 lines: /'
timeout 150 $B/determinism --ignored --nocapture --test-threads=1 > "$OUT/determinism.log" 2>&1; echo "determinism rc=$?"
tail -3 "$OUT/determinism.log"
echo "elapsed ${SECONDS}s"
