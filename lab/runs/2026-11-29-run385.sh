#!/usr/bin/env bash
# Run 385 (issue 39): the record on stage 200's build (every kept variant
# at the eight record shapes, cuDNN FP8 and torch in the same call).
# Predictions: lab/predictions/2026-11-29-predictions-run385.md.
#   carry: gpu-bundle-diag/r385 (sdpa), .whl
set -uo pipefail
mkdir -p /tmp/b385
xz -dc gpu-bundle-diag/r385/sdpa.xz > /tmp/b385/sdpa; chmod +x /tmp/b385/sdpa
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/nvidia_cudnn_frontend*.whl && export PYTHONPATH=/tmp/site
S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader > $S
SH="2,8,256,64 1,8,512,64 4,16,2048,64 2,16,8192,64 2,16,8192,64,causal 4,16,4096,128 1,16,16384,128 1,16,16384,128,causal"
REC=$OUT/rec; mkdir -p $REC
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.draw,temperature.gpu,serial --format=csv
  /tmp/b385/sdpa info; } > "$REC/device.txt" 2>&1
# shellcheck disable=SC2086
timeout 150 python3 scripts/peers.py $SH > "$REC/peers.jsonl" 2>> "$REC/device.txt"; echo "peers rc=$?" >> $S
# shellcheck disable=SC2086
timeout 150 /tmp/b385/sdpa bench --variants mma,wgmma,wgmma-fp8pv,split,split-wg,split-n64 \
  --shapes $SH --modes graph --json "$REC/bench-variants.json" > "$REC/bench.txt" 2>&1; echo "bench rc=$?" >> $S
grep -E "^(wgmma|split-n64) .* graph" "$REC/bench.txt" | awk '{print $1, $2, $5}' | tr '\n' ';' >> $S; echo >> $S
grep -E "cudnn" "$REC/peers.jsonl" | head -20 | cut -c1-160 >> $S
tar czf "$OUT/rec.tgz" -C "$OUT" rec
echo "elapsed ${SECONDS}s" >> $S
cat $S
