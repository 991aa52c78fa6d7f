#!/usr/bin/env bash
# Run 287 (session 33): the mission shapes alone on one more machine,
# whichever kind comes: `split-n64` of run 285's bundle (main at 1a2672d)
# and the torch peers, in one call, three rounds each, to see the ratio's
# spread across machines after stage 168c (predictions:
# results/2026-11-27-predictions-run287.md).
set -uo pipefail
tar xJf gpu-bundle-diag/r285/gb.tar.xz
S="2,8,256,64 1,8,512,64"
for r in 1 2 3; do
  timeout 60 gpu-bundle/bin/sdpa bench --variants split-n64 --shapes $S --modes graph --json "$OUT/ours-$r.json" 2>&1 | grep -E "^split-n64"
  timeout 90 python3 scripts/peers.py $S >"$OUT/peers-$r.jsonl" 2>/dev/null
  python3 scripts/peers.py --summarize "$OUT/peers-$r.jsonl" | grep -E "cudnn"
done
nvidia-smi --query-gpu=name,serial,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
echo "elapsed ${SECONDS}s"
