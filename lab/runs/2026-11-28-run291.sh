#!/usr/bin/env bash
# Run 291 (issue 38): the timings of the redesign's bundle on the same
# machine as run 290: the same-run A/B of c9d53eb's `sdpa` against the new
# one (alternating, 3 rounds, graph replay, every kept variant at the eight
# record shapes), then the bench record with the peers, cuDNN's FP8 SDPA
# among them (the nvidia-cudnn-frontend wheel carried in .whl/).
# Predictions: lab/predictions/2026-11-28-predictions-run290.md.
set -uo pipefail
[ -d gpu-bundle/bin ] || { mkdir -p gpu-bundle && tar xJf gpu-bundle-diag/r290/gb.tar.xz -C gpu-bundle; }
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site
S="2,8,256,64 1,8,512,64 4,16,2048,64 2,16,8192,64 2,16,8192,64,causal 4,16,4096,128 1,16,16384,128 1,16,16384,128,causal"
V=mma,wgmma,wgmma-fp8pv,split,split-wg,split-n64
ROUNDS=3 STEP_TIMEOUT=200 bash scripts/device-run.sh ab "$V" "$S" old=gpu-bundle-diag/r290/sdpa-c9d53eb new=gpu-bundle/bin/sdpa
# The record: the new build's last A/B round is its bench; the peers now,
# if the call has the time left.
W=$(mktemp -d)
mkdir -p "$W/rec" && cp "$OUT/gpu.txt" "$W/rec/" 2>/dev/null
tar xzf "$OUT/ab-json.tgz" -C "$W" && cp "$W/ab/ab-new-3.json" "$W/rec/bench-variants.json"
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.draw,temperature.gpu,serial --format=csv
  gpu-bundle/bin/sdpa info; } > "$W/rec/device.txt" 2>&1
if [ "$SECONDS" -lt 380 ]; then
  # shellcheck disable=SC2086
  timeout $((560 - SECONDS)) python3 scripts/peers.py $S > "$W/rec/peers.jsonl" 2>> "$W/rec/device.txt"
  python3 scripts/peers.py --summarize "$W/rec/peers.jsonl" | head -40
else
  echo "peers skipped: ${SECONDS}s gone"
fi
tar czf "$OUT/rec.tgz" -C "$W" rec
echo "elapsed ${SECONDS}s"
