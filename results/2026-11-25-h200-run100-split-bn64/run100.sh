#!/usr/bin/env bash
# Run 100 (stage 68): split with 64-key blocks (sdpa-bn64) against ad4ae0b's split (sdpa-base), graph mode.
set -uo pipefail
export OUT=${OUT:-gpu-out}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > "$OUT/device.txt"
OUT="$OUT" ROUNDS=2 bash scripts/ab-bench.sh gpu-bundle-diag/sdpa-base gpu-bundle-diag/sdpa-bn64 split \
  "2,8,256,64 1,8,512,64 1,1,1,64 1,1,256,64 1,8,1024,64 4,8,512,64 2,8,200,64 1,8,512,64,causal 2,8,256,128 1,8,512,128 1,4,1024,128" graph > "$OUT/ab.txt" 2>&1
(cd "$OUT" && tar cf ab.tar ab-*.json && rm ab-*.json)
cat "$OUT/device.txt"; grep -v "^\[" "$OUT/ab.txt" | grep -vE "^== round|^ *$" | tail -12
