#!/usr/bin/env bash
# Run 367 (issue 39): the record on stage 191's build (the 192-key
# wgmma-fp8pv kernel warp-specialized): every kept variant at the eight
# record shapes (graph replay) and the peers, cuDNN's FP8 SDPA among
# them, in one call; `cargo xtask record` makes the baseline from rec/.
# Predictions: lab/predictions/2026-11-29-predictions-run367.md.
#   carry: gpu-bundle-diag/r367 (sdpa), .whl (nvidia-cudnn-frontend 1.16.0, cp312)
set -uo pipefail
mkdir -p /tmp/b367; xz -dc gpu-bundle-diag/r367/sdpa.xz > /tmp/b367/sdpa; chmod +x /tmp/b367/sdpa
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site
S="2,8,256,64 1,8,512,64 4,16,2048,64 2,16,8192,64 2,16,8192,64,causal 4,16,4096,128 1,16,16384,128 1,16,16384,128,causal"
R=$OUT/rec
mkdir -p "$R"
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.draw,temperature.gpu,serial --format=csv
  /tmp/b367/sdpa info; } > "$R/device.txt" 2>&1
# shellcheck disable=SC2086
timeout 220 python3 scripts/peers.py $S > "$R/peers.jsonl" 2>> "$R/device.txt"
echo "peers rc=$? at ${SECONDS}s"
python3 scripts/peers.py --summarize "$R/peers.jsonl" | head -40
# shellcheck disable=SC2086
timeout $((570 - SECONDS)) /tmp/b367/sdpa bench --variants mma,wgmma,wgmma-fp8pv,split,split-wg,split-n64 \
  --shapes $S --modes graph --json "$R/bench-variants.json" > "$R/bench.txt" 2>&1
echo "bench rc=$? at ${SECONDS}s"
grep -E " graph " "$R/bench.txt" | cut -c1-100
tar czf "$OUT/rec.tgz" -C "$OUT" rec && rm -r "$R"
echo "elapsed ${SECONDS}s"
