#!/usr/bin/env bash
# Run 260 (session 30): compute-sanitizer memcheck and initcheck over
# sanitize_target (all 30 kernels, f16 and bf16, on the mission, odd-causal
# and GQA shapes), built at f982bcc (kernels as HEAD's).
set -uo pipefail
tar xJf gpu-bundle-diag/r260/sb.tar.xz
SANITIZE_TIMEOUT=270 bash scripts/sanitize.sh memcheck initcheck
echo "sanitize exit $?"
grep -cE " ok$" "$OUT/sanitize.log"; grep -E "FAIL|ERROR SUMMARY" "$OUT/sanitize.log" | sort | uniq -c | head
nvidia-smi --query-gpu=name,serial,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
xz -9 "$OUT/sanitize.log"
echo "elapsed ${SECONDS}s"
