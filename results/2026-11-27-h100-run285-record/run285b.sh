#!/usr/bin/env bash
# Run 285, call b (session 33): the bench and torch peers of the same
# bundle on the same warm machine as call a, then the GPU fuzz: the second
# half of the record. The bench goes first so that a slow fuzz cannot cost
# the timings.
set -uo pipefail
[ -x gpu-bundle/bin/sdpa ] || tar xJf gpu-bundle-diag/r285/gb.tar.xz
OUT=$OUT/rec STEP_TIMEOUT=300 bash scripts/gpu-run.sh bench peers fuzz > "$OUT/run285b.txt" 2>&1
grep -E "^(split-n64|wgmma|wgmma-fp8pv) .* graph" "$OUT/run285b.txt" | head -30
python3 scripts/peers.py --summarize "$OUT/rec/peers.jsonl" | grep -E "2,8,256,64|1,8,512,64" | head -8
tail -3 "$OUT/rec/fuzz.log"
nvidia-smi --query-gpu=name,serial,driver_version --format=csv,noheader
tar czf "$OUT/rec-b.tgz" -C "$OUT" rec run285b.txt && rm -r "$OUT/rec" "$OUT/run285b.txt"
echo "elapsed ${SECONDS}s"
