#!/usr/bin/env bash
# Run 278 (session 32): main, pairs (run 276), sw128 (64-byte rows under
# the 128-byte swizzle), main2 (predictions:
# results/2026-11-27-predictions-run278.md), 6 rounds.
set -uo pipefail
B=gpu-bundle-diag/r276/bin
bash scripts/device-run.sh unpack gpu-bundle-diag/r276/r276.tar.xz $B
bash scripts/device-run.sh unpack gpu-bundle-diag/r278/r278.tar.xz $B
nvidia-smi --query-gpu=name,serial,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
S="2,8,256,64 1,8,512,64 2,8,512,64 1,8,1024,64 1,8,2048,64 1,8,512,64,causal 2,8,200,64 1,8,333,64"
AB_TIMES_ONLY=1 ROUNDS=6 bash scripts/device-run.sh ab split-n64 "$S" main=$B/main/sdpa pairs=$B/pairs/sdpa sw128=$B/sw128/sdpa main2=$B/main/sdpa
grep -E "FAIL|wrong|rel" "$OUT/ab.log" | head -20
echo "elapsed ${SECONDS}s"
