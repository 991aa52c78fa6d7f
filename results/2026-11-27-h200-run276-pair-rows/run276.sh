#!/usr/bin/env bash
# Run 276 (session 32): `split-n64` D = 64's copies as 128-byte rows
# (predictions: results/2026-11-27-predictions-run276.md). Two binaries:
# main and pairs (pairs.patch over it), one A/B chain, 5 rounds.
set -uo pipefail
B=gpu-bundle-diag/r276/bin
bash scripts/device-run.sh unpack gpu-bundle-diag/r276/r276.tar.xz $B
nvidia-smi --query-gpu=name,serial,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
S="2,8,256,64 1,8,512,64 1,8,384,64 1,8,1024,64 4,8,512,64 2,8,200,64 1,8,512,64,causal 1,1,2,64"
ROUNDS=5 bash scripts/device-run.sh ab split-n64 "$S" main=$B/main/sdpa pairs=$B/pairs/sdpa main2=$B/main/sdpa
echo "elapsed ${SECONDS}s"
