#!/usr/bin/env bash
# Run 267 (session 31): an ablation ladder of `split-n64` D = 64
# (predictions: results/2026-11-27-predictions-run267.md). One experiment
# binary (ladder.patch over bfb663a) whose env SDPA_EXP_EXIT ends each block
# after a phase (wrong outputs, timed only), and main's binary.
set -uo pipefail
mkdir -p gpu-bundle-diag/r267/bin; tar xJf gpu-bundle-diag/r267/r267.tar.xz -C gpu-bundle-diag/r267/bin
B=gpu-bundle-diag/r267/bin
nvidia-smi --query-gpu=name,serial,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
S="1,1,1,64 2,8,256,64 1,8,512,64 1,8,384,64"
AB_TIMES_ONLY=1 ROUNDS=3 bash scripts/ab-chain.sh split-n64 "$S" graph \
  main=$B/main/sdpa e11=$B/e11.sh e12=$B/e12.sh e13=$B/e13.sh e14=$B/e14.sh full=$B/full.sh main2=$B/main/sdpa \
  > "$OUT/ab.log" 2>&1
tail -6 "$OUT/ab.log"
tar czf "$OUT/ab.tgz" -C "$OUT" $(cd "$OUT" && ls ab-*.json) && rm -f "$OUT"/ab-*.json
echo "elapsed ${SECONDS}s"
