#!/usr/bin/env bash
# Run 270 (session 31): which of run 265's two cluster barriers costs
# (predictions: results/2026-11-27-predictions-run270.md). One experiment
# binary (cluster-barriers.patch over bfb663a) whose env picks the mode
# (wrappers m1, m2, m4, m5), and main's binary, in one A/B chain.
set -uo pipefail
mkdir -p gpu-bundle-diag/r270/bin; tar xJf gpu-bundle-diag/r270/r270.tar.xz -C gpu-bundle-diag/r270/bin
B=gpu-bundle-diag/r270/bin
nvidia-smi --query-gpu=name,serial,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
S="2,8,256,64 1,8,512,64 1,8,384,64 1,8,1024,64"
ROUNDS=3 bash scripts/ab-chain.sh split-n64 "$S" graph \
  main=$B/main/sdpa m1=$B/m1.sh m2=$B/m2.sh m4=$B/m4.sh m5=$B/m5.sh main2=$B/main/sdpa > "$OUT/ab.log" 2>&1
python3 -c '
import glob, json, sys
bad = [(f, r["shape"]) for f in glob.glob(sys.argv[1] + "/ab-*.json") for r in json.load(open(f))["rows"] if not r["correct"]]
print("every row correct" if not bad else f"INCORRECT rows: {bad}")' "$OUT"
tail -6 "$OUT/ab.log"
tar czf "$OUT/ab.tgz" -C "$OUT" $(cd "$OUT" && ls ab-*.json) && rm -f "$OUT"/ab-*.json
echo "elapsed ${SECONDS}s"
