#!/usr/bin/env bash
# Run 269 (session 31): `split-n64` D = 64 with 48-row blocks
# (predictions: results/2026-11-27-predictions-run269.md). Two binaries:
# main (bfb663a) and rows48 (rows48.patch over it), one A/B chain.
set -uo pipefail
mkdir -p gpu-bundle-diag/r269/bin; tar xJf gpu-bundle-diag/r269/r269.tar.xz -C gpu-bundle-diag/r269/bin
B=gpu-bundle-diag/r269/bin
nvidia-smi --query-gpu=name,serial,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
S="2,8,256,64 1,8,512,64 1,1,1,64 1,8,384,64 4,8,512,64 1,8,1024,64 2,8,200,64 1,8,512,64,causal"
ROUNDS=4 bash scripts/ab-chain.sh split-n64 "$S" graph \
  main=$B/main/sdpa rows48=$B/rows48/sdpa main2=$B/main/sdpa > "$OUT/ab.log" 2>&1
python3 -c '
import glob, json, sys
bad = [(f, r["shape"]) for f in glob.glob(sys.argv[1] + "/ab-*.json") for r in json.load(open(f))["rows"] if not r["correct"]]
print("every row correct" if not bad else f"INCORRECT rows: {bad}")' "$OUT"
tail -10 "$OUT/ab.log"
tar czf "$OUT/ab.tgz" -C "$OUT" $(cd "$OUT" && ls ab-*.json) && rm -f "$OUT"/ab-*.json
echo "elapsed ${SECONDS}s"
