#!/usr/bin/env bash
# Run 286 (session 33): the bench and torch peers of run 285's bundle
# (main at 1a2672d) on a second machine, whichever kind comes. Run 285 ran
# the gate, overlap, device_inputs and GPU fuzz of this bundle; a call meant
# for an H200 (its gate) landed on run 285's warm H100 and gave the gate a
# second time there. Device time left no room for the gate again, so this
# record is the timings only.
set -uo pipefail
tar xJf gpu-bundle-diag/r285/gb.tar.xz
OUT=$OUT/rec STEP_TIMEOUT=300 bash scripts/gpu-run.sh bench peers > "$OUT/run286.txt" 2>&1
grep -E "^(split-n64|wgmma|wgmma-fp8pv) .* graph" "$OUT/run286.txt" | head -30
python3 scripts/peers.py --summarize "$OUT/rec/peers.jsonl" | grep -E "2,8,256,64|1,8,512,64" | head -8
nvidia-smi --query-gpu=name,serial,driver_version --format=csv,noheader | tee "$OUT/rec/gpu.txt"
tar czf "$OUT/rec.tgz" -C "$OUT" rec run286.txt && rm -r "$OUT/rec" "$OUT/run286.txt"
echo "elapsed ${SECONDS}s"
