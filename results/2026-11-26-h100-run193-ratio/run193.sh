#!/usr/bin/env bash
# Run 193 (session 21): the mission-shape ratio of ab123f4's kernels
# (split-n64 unchanged since record -15) on an H100: run 178's three
# rounds of split-n64 and the torch peers at the two mission shapes.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader | tee $OUT/gpu.txt
B=gpu-bundle/bin/sdpa
for r in 1 2 3; do
  timeout 60 $B bench --variants split-n64 --shapes 2,8,256,64 1,8,512,64 --modes graph --json $OUT/ours-$r.json | grep -v '^\[' | tail -2
  timeout 120 python3 scripts/peers.py 2,8,256,64 1,8,512,64 > $OUT/peers-$r.jsonl 2>/dev/null
  python3 scripts/peers.py --summarize $OUT/peers-$r.jsonl | grep -E "cudnn|flash" | sort -k3 | head -4
done
