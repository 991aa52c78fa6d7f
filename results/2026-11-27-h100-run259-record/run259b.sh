#!/usr/bin/env bash
# Run 259, call b (session 30): the bench and torch peers of the same
# bundle on the same warm machine as call a, the second half of the record.
set -uo pipefail
[ -x gpu-bundle/bin/sdpa ] || tar xJf gpu-bundle-diag/r259/gb.tar.xz
OUT=$OUT/rec bash scripts/gpu-run.sh bench peers > "$OUT/run259b.txt" 2>&1
grep -E "^(split-n64|wgmma|wgmma-fp8pv) .* graph" "$OUT/run259b.txt" | head -30
grep -E "cudnn|flash" "$OUT/rec/peers.jsonl" | head -4 | cut -c1-300
nvidia-smi --query-gpu=name,serial,driver_version --format=csv,noheader
tar czf "$OUT/rec-b.tgz" -C "$OUT" rec run259b.txt && rm -r "$OUT/rec" "$OUT/run259b.txt"
echo "elapsed ${SECONDS}s"
