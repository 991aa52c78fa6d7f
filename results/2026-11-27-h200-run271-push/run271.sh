#!/usr/bin/env bash
# Run 271 (session 31): K/V shared inside a cluster by pushes
# (predictions: results/2026-11-27-predictions-run271.md). One experiment
# binary (push.patch over bfb663a) whose env picks the mode
# (wrappers m1, m5, m6, m7), and main's binary, in one A/B chain.
set -uo pipefail
mkdir -p gpu-bundle-diag/r271/bin; tar xJf gpu-bundle-diag/r271/r271.tar.xz -C gpu-bundle-diag/r271/bin
B=gpu-bundle-diag/r271/bin
nvidia-smi --query-gpu=name,serial,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
S="2,8,256,64 1,8,512,64 1,8,384,64 2,8,512,64 4,8,512,64"
STEP_TIMEOUT=60 ROUNDS=3 bash scripts/ab-chain.sh split-n64 "$S" graph \
  main=$B/main/sdpa m1=$B/m1.sh m5=$B/m5.sh m7=$B/m7.sh m6=$B/m6.sh main2=$B/main/sdpa > "$OUT/ab.log" 2>&1
python3 -c '
import glob, json, sys
bad = [(f, r["shape"]) for f in glob.glob(sys.argv[1] + "/ab-*.json") for r in json.load(open(f))["rows"] if not r["correct"]]
print("every row correct" if not bad else f"INCORRECT rows: {bad}")' "$OUT"
tail -7 "$OUT/ab.log"
tar czf "$OUT/ab.tgz" -C "$OUT" $(cd "$OUT" && ls ab-*.json) && rm -f "$OUT"/ab-*.json
echo "elapsed ${SECONDS}s"
