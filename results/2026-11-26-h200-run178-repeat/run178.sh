#!/usr/bin/env bash
# Run 178 (session 19): run 170's three rounds of the mission-shape ratio
# (split-n64 and the torch peers) on the next machine lent; on an H200 also
# the whole record with its checks (scripts/gpu-run.sh), into record/.
# Everything is packed into $OUT/run178.tgz (the device returns 8 files).
set -uo pipefail
FINAL=$OUT
OUT=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader | tee $OUT/gpu.txt
B=gpu-bundle/bin/sdpa
for r in 1 2 3; do
  timeout 60 $B bench --variants split-n64 --shapes 2,8,256,64 1,8,512,64 --modes graph --json $OUT/ours-$r.json | grep -v '^\[' | tail -3
  timeout 120 python3 scripts/peers.py 2,8,256,64 1,8,512,64 > $OUT/peers-$r.jsonl 2>/dev/null
  python3 scripts/peers.py --summarize $OUT/peers-$r.jsonl | grep -E "cudnn|flash" | sort -k3 | head -4
done
if grep -q H200 $OUT/gpu.txt; then
  mkdir -p $OUT/record
  OUT=$OUT/record STEP_TIMEOUT=200 bash scripts/gpu-run.sh gate fuzz bench peers > $OUT/record-run.txt 2>&1
  tail -30 $OUT/record-run.txt
fi
tar czf $FINAL/run178.tgz -C $OUT .
