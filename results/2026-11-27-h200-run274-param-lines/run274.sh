#!/usr/bin/env bash
# Run 274 (session 31): both kernel-parameter lines read at a block's start
# (predictions: results/2026-11-27-predictions-run274.md). Two binaries:
# main and touch (touch.patch over it), one A/B chain, 5 rounds.
set -uo pipefail
mkdir -p gpu-bundle-diag/r274/bin; tar xJf gpu-bundle-diag/r274/r274.tar.xz -C gpu-bundle-diag/r274/bin
B=gpu-bundle-diag/r274/bin
nvidia-smi --query-gpu=name,serial,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
S="2,8,256,64 1,8,512,64 1,1,1,64 1,8,384,64 1,8,1024,64 4,8,512,64"
ROUNDS=5 bash scripts/ab-chain.sh split-n64 "$S" graph \
  main=$B/main/sdpa touch=$B/touch/sdpa main2=$B/main/sdpa > "$OUT/ab.log" 2>&1
tail -8 "$OUT/ab.log"
tar czf "$OUT/ab.tgz" -C "$OUT" $(cd "$OUT" && ls ab-*.json) && rm -f "$OUT"/ab-*.json
echo "elapsed ${SECONDS}s"
