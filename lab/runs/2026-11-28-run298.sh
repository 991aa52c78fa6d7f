#!/usr/bin/env bash
# Run 298 (issue 40): run 297 again after its fixes: the pytest suite (the
# opcheck test checks no-mutation on raw bytes), the candle op's test and
# example (E4M3 casts on the CPU), and the timing table: bench.py from
# python/benches (a checkout no longer shadows the installed package), then
# `sdpa bench` on the same kernels, the GPU alone for both.
# Predictions: lab/predictions/2026-11-28-predictions-run297.md (unchanged).
set -uo pipefail
B=gpu-bundle/bin
D=gpu-bundle-diag/r298
mkdir -p gpu-bundle && tar xJf $D/gb.tar.xz -C gpu-bundle
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader | tee "$OUT/gpu.txt"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/sdpa_fp8-*.whl .whl/pytest/*.whl || exit 1
export PYTHONPATH=/tmp/site
W=$OUT/logs; mkdir -p $W
R="--ignored --nocapture --test-threads=1"
step() { local name=$1; shift; timeout 300 "$@" >"$W/$name.log" 2>&1; echo "$name rc=$?" | tee -a $W/summary.txt; }
step pytest python3 -m pytest -q -p no:cacheprovider python/tests
for f in $D/candle_op.gz $D/candle_attention.gz; do gunzip -c $f > /tmp/$(basename $f .gz); chmod +x /tmp/$(basename $f .gz); done
export LD_LIBRARY_PATH=$(python3 -c 'import nvidia, os; print(os.path.join(list(nvidia.__path__)[0], "cu13", "lib"))'):${LD_LIBRARY_PATH:-}
step candle_op /tmp/candle_op $R
step candle_example /tmp/candle_attention
step pybench python3 python/benches/bench.py --out-dtype f16 --layout bhsd --json $W/bench-python.json
variants=$(python3 -c 'import json; print(",".join(sorted({r["variant"] for r in json.load(open("'$W'/bench-python.json"))["rows"]})))' 2>/dev/null || echo wgmma,split-n64,split-wg,split)
echo "variants: $variants"
step sdpabench $B/sdpa bench --variants "$variants" --out-dtype f16 --modes graph,direct --json $W/bench-sdpa.json
tail -3 $W/pytest.log
grep -E "test result|max_err|rel_l2" $W/candle_op.log | head -12
tail -4 $W/candle_example.log
tail -14 $W/pybench.log
grep -E "graph|direct" $W/sdpabench.log | head -40
tar czf $OUT/logs.tgz -C $W .
echo "elapsed ${SECONDS}s"
