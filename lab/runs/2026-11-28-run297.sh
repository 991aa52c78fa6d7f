#!/usr/bin/env bash
# Run 297 (issue 40): the bindings on the GPU. The PyTorch package's pytest
# suite and example, its per-call times against `sdpa bench` (same kernels,
# same shapes, one machine), the candle op's test and example, the stable
# downstream crate (shipped cubin, and the shipped sm_89 PTX by JIT), the
# device-API tests (graph capture after eager runs: kernel nodes only), and
# the concurrency soak alone on the GPU (free memory is device-wide).
# Predictions: lab/predictions/2026-11-28-predictions-run297.md.
set -uo pipefail
B=gpu-bundle/bin
D=gpu-bundle-diag/r297
mkdir -p gpu-bundle && tar xJf $D/gb.tar.xz -C gpu-bundle
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader | tee "$OUT/gpu.txt"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/sdpa_fp8-*.whl .whl/pytest/*.whl || exit 1
export PYTHONPATH=/tmp/site
python3 -c 'import torch, sdpa_fp8; print("torch", torch.__version__, torch.version.cuda, "sdpa_fp8", sdpa_fp8.__file__)'
W=$OUT/logs; mkdir -p $W
R="--ignored --nocapture --test-threads=1"
step() { local name=$1; shift; timeout 300 "$@" >"$W/$name.log" 2>&1; echo "$name rc=$?" | tee -a $W/summary.txt; }
step pytest python3 -m pytest -q -p no:cacheprovider python/tests
step example python3 python/examples/attention.py
step device_api $B/device_api $R
step concurrency $B/concurrency $R
for f in $D/candle_op.gz $D/candle_attention.gz $D/sdpa-downstream.gz; do gunzip -c $f > /tmp/$(basename $f .gz); chmod +x /tmp/$(basename $f .gz); done
export LD_LIBRARY_PATH=$(python3 -c 'import nvidia, os; print(os.path.join(list(nvidia.__path__)[0], "cu13", "lib"))'):${LD_LIBRARY_PATH:-}
step candle_op /tmp/candle_op $R
step candle_example /tmp/candle_attention
step downstream /tmp/sdpa-downstream
step downstream89 env SDPA_IMAGE=sm_89 /tmp/sdpa-downstream
# Timings, the GPU alone: Python first, then the same kernels by sdpa bench.
step pybench python3 python/benches/bench.py --out-dtype f16 --layout bhsd --json $W/bench-python.json
variants=$(python3 -c 'import json; print(",".join(sorted({r["variant"] for r in json.load(open("'$W'/bench-python.json"))["rows"]})))' 2>/dev/null || echo wgmma,split-n64,split-wg,split)
step sdpabench $B/sdpa bench --variants "$variants" --out-dtype f16 --modes graph,direct --json $W/bench-sdpa.json
cat $W/summary.txt
grep -E "passed|failed" $W/pytest.log | tail -2
grep -E "test result" $W/device_api.log $W/concurrency.log $W/candle_op.log
tail -3 $W/downstream.log $W/downstream89.log
tail -14 $W/pybench.log
tail -45 $W/sdpabench.log
echo "elapsed ${SECONDS}s"
