#!/usr/bin/env bash
# Run 277 (session 32): run 276's binaries again on a wider set of shapes
# (predictions: results/2026-11-27-predictions-run277.md), 6 rounds.
set -uo pipefail
B=gpu-bundle-diag/r276/bin
bash scripts/device-run.sh unpack gpu-bundle-diag/r276/r276.tar.xz $B
nvidia-smi --query-gpu=name,serial,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
S="2,8,256,64 1,8,512,64 2,8,512,64 1,16,512,64 1,8,448,64 4,8,256,64 1,8,768,64 1,8,1024,64 1,8,2048,64"
ROUNDS=6 bash scripts/device-run.sh ab split-n64 "$S" main=$B/main/sdpa pairs=$B/pairs/sdpa main2=$B/main/sdpa
echo "elapsed ${SECONDS}s"
