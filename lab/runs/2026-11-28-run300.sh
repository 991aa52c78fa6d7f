#!/usr/bin/env bash
# Run 300 (issue 40): Python against `sdpa bench` with bench.py sampling as
# `sdpa bench` does (about 2 ms of calls a sample; run 299's 100-call
# samples ran the GPU into its power cap), alternated twice, every record
# shape, the recommended kernels. Prediction: within 2% at the long shapes
# (graph and eager against graph and direct); Python's eager call at the
# mission shapes is its host overhead (~65 us), its graph replay within
# 0.2 us of `sdpa bench`'s.
set -uo pipefail
B=gpu-bundle/bin
mkdir -p gpu-bundle && tar xJf gpu-bundle-diag/r299/gb.tar.xz -C gpu-bundle
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader | tee "$OUT/gpu.txt"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/sdpa_fp8-*.whl || exit 1
export PYTHONPATH=/tmp/site
W=$OUT/logs; mkdir -p $W
for round in 1 2; do
  timeout 150 python3 python/benches/bench.py --out-dtype f16 --layout bhsd --json $W/py-$round.json > $W/py-$round.log 2>&1
  timeout 200 $B/sdpa bench --variants split-n64,wgmma --out-dtype f16 --modes graph,direct --json $W/sdpa-$round.json > $W/sdpa-$round.log 2>&1
done
for round in 1 2; do grep -E "^[0-9]" $W/py-$round.log; grep -E "graph|direct" $W/sdpa-$round.log | grep -vE "^wgmma +(2,8,256|1,8,512)|^split-n64 +([0-9],16)"; done
tar czf $OUT/logs.tgz -C $W .
echo "elapsed ${SECONDS}s"
