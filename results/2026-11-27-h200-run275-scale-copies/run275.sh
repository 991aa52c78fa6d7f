#!/usr/bin/env bash
# Run 275 (session 31): each block reads its own copy of the scales
# (predictions: results/2026-11-27-predictions-run275.md). Two binaries:
# main and rep (scale-copies.patch over it), one A/B chain, 5 rounds.
set -uo pipefail
mkdir -p gpu-bundle-diag/r275/bin; tar xJf gpu-bundle-diag/r275/r275.tar.xz -C gpu-bundle-diag/r275/bin
B=gpu-bundle-diag/r275/bin
nvidia-smi --query-gpu=name,serial,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
S="2,8,256,64 1,8,512,64 1,1,1,64 1,8,384,64 1,8,1024,64 4,8,512,64"
ROUNDS=5 bash scripts/ab-chain.sh split-n64 "$S" graph \
  main=$B/main/sdpa rep=$B/rep/sdpa main2=$B/main/sdpa > "$OUT/ab.log" 2>&1
tail -8 "$OUT/ab.log"
tar czf "$OUT/ab.tgz" -C "$OUT" $(cd "$OUT" && ls ab-*.json) && rm -f "$OUT"/ab-*.json
echo "elapsed ${SECONDS}s"
