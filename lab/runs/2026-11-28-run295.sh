#!/usr/bin/env bash
# Run 295 (issue 41, item 4): the concurrency and soak tests
# (tests/tests/concurrency.rs) on an H200, their first run: threads sharing
# one Attention (and one each) give the serial bits, 10^5 calls hold device
# memory steady, refused calls leave the library usable.
set -uo pipefail
xz -dk gpu-bundle-diag/r295/concurrency.xz && chmod +x gpu-bundle-diag/r295/concurrency
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader | tee "$OUT/gpu.txt"
timeout 300 gpu-bundle-diag/r295/concurrency --ignored --nocapture --test-threads=1 2>&1 | tee "$OUT/concurrency.log" | grep -vE '^\s*$' | tail -40
echo "elapsed ${SECONDS}s"
