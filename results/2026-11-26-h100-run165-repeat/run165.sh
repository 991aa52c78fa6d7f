#!/usr/bin/env bash
# Run 165 (session 17): record -15's mission-shape ratio repeated on whatever
# H100 the device tool lends next: split-n64 and the torch peers at the two
# mission shapes, twice in turn (same binary as run 164: HEAD's bundle).
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader | tee $OUT/gpu.txt
for r in 1 2; do
  timeout 60 gpu-bundle/bin/sdpa bench --variants split-n64 --shapes 2,8,256,64 1,8,512,64 --modes graph --json $OUT/ours-$r.json | grep -v '^\[' | tail -3
  timeout 120 python3 scripts/peers.py 2,8,256,64 1,8,512,64 > $OUT/peers-$r.jsonl 2>/dev/null
  python3 scripts/peers.py --summarize $OUT/peers-$r.jsonl | grep -E "cudnn|flash" | sort -k3 | head -8
done
