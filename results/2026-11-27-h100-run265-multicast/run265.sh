#!/usr/bin/env bash
# Run 265 (session 31): K/V multicast across a cluster on `split-n64` D = 64
# (predictions: results/2026-11-27-predictions-run265.md). One experiment
# binary (multicast.patch over bfb663a, cubins) whose mode the env picks
# (wrappers c1, c2m1, c2m2, c2m3, c4m3), and main's binary, in one A/B chain.
set -uo pipefail
mkdir -p gpu-bundle-diag/r265/bin; tar xJf gpu-bundle-diag/r265/r265.tar.xz -C gpu-bundle-diag/r265/bin
B=gpu-bundle-diag/r265/bin
nvidia-smi --query-gpu=name,serial,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
S="2,8,256,64 1,8,512,64 1,8,384,64 4,8,512,64 1,8,1024,64"
# The launch's report of max active clusters (stderr), once per cluster size.
for w in c2m3 c4m3; do
  timeout 60 $B/$w.sh bench --variants split-n64 --shapes 1,8,512,64 --modes graph 2>&1 | grep -E "EXPERIMENT|split-n64" | tee -a "$OUT/clusters.txt"
done
ROUNDS=3 bash scripts/ab-chain.sh split-n64 "$S" graph \
  main=$B/main/sdpa c1=$B/c1.sh c2m1=$B/c2m1.sh c2m2=$B/c2m2.sh c2m3=$B/c2m3.sh c4m3=$B/c4m3.sh main2=$B/main/sdpa \
  > "$OUT/ab.log" 2>&1
python3 -c '
import glob, json, sys
bad = [(f, r["shape"]) for f in glob.glob(sys.argv[1] + "/ab-*.json") for r in json.load(open(f))["rows"] if not r["correct"]]
print("every row correct" if not bad else f"INCORRECT rows: {bad}")' "$OUT"
tail -14 "$OUT/ab.log"
tar czf "$OUT/ab.tgz" -C "$OUT" $(cd "$OUT" && ls ab-*.json) && rm -f "$OUT"/ab-*.json
echo "elapsed ${SECONDS}s"
