#!/usr/bin/env bash
# Run 292 (issue 38): the record of the redesign's bundle on run 290-291's
# H200: the bench of every kept variant at the eight record shapes (graph
# replay) and the peers, cuDNN's FP8 SDPA among them. (Run 291's A/B took
# the whole call: its bench rounds check every row against f64 first.)
set -uo pipefail
[ -d gpu-bundle/bin ] || { mkdir -p gpu-bundle && tar xJf gpu-bundle-diag/r290/gb.tar.xz -C gpu-bundle; }
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site
S="2,8,256,64 1,8,512,64 4,16,2048,64 2,16,8192,64 2,16,8192,64,causal 4,16,4096,128 1,16,16384,128 1,16,16384,128,causal"
R=$OUT/rec
mkdir -p "$R"
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.draw,temperature.gpu,serial --format=csv
  gpu-bundle/bin/sdpa info; } > "$R/device.txt" 2>&1
# shellcheck disable=SC2086
timeout 240 python3 scripts/peers.py $S > "$R/peers.jsonl" 2>> "$R/device.txt"
echo "peers rc=$? at ${SECONDS}s"
python3 scripts/peers.py --summarize "$R/peers.jsonl" | head -40
# shellcheck disable=SC2086
timeout $((570 - SECONDS)) gpu-bundle/bin/sdpa bench --variants mma,wgmma,wgmma-fp8pv,split,split-wg,split-n64 \
  --shapes $S --modes graph --json "$R/bench-variants.json" > "$R/bench.txt" 2>&1
echo "bench rc=$? at ${SECONDS}s"
grep -E " graph " "$R/bench.txt" | cut -c1-100
tar czf "$OUT/rec.tgz" -C "$OUT" rec && rm -r "$R"
echo "elapsed ${SECONDS}s"
