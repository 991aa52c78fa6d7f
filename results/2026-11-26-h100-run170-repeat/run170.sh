#!/usr/bin/env bash
# Run 170 (session 18): record -15's mission-shape ratio repeated on whatever
# H100 the device tool lends next: split-n64 and the torch peers at the two
# mission shapes, three times in turn (the build of ae0a04e, whose kernels are record -15's).
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader | tee $OUT/gpu.txt
for r in 1 2 3; do
  timeout 60 gpu-bundle-diag/r169/sdpa-base bench --variants split-n64 --shapes 2,8,256,64 1,8,512,64 --modes graph --json $OUT/ours-$r.json | grep -v '^\[' | tail -3
  timeout 120 python3 scripts/peers.py 2,8,256,64 1,8,512,64 > $OUT/peers-$r.jsonl 2>/dev/null
  python3 scripts/peers.py --summarize $OUT/peers-$r.jsonl | grep -E "cudnn|flash" | sort -k3 | head -8
done
