#!/usr/bin/env bash
# Run 356: the gate on split-n64 and split-wg after stage 187.
# Predictions: lab/predictions/2026-11-29-predictions-run356.md.
#   carry: gpu-bundle-diag/r355 (gpu_gate)
set -uo pipefail
W=/tmp/logs356; rm -rf $W; mkdir -p $W /tmp/b356
xz -dc gpu-bundle-diag/r355/gpu_gate.xz > /tmp/b356/gpu_gate; chmod +x /tmp/b356/gpu_gate
S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader > $S
timeout 170 env SDPA_GATE_VARIANTS=split-n64,split-wg /tmp/b356/gpu_gate --ignored --nocapture --test-threads=1 > $W/gate.log 2>&1
echo "gate split-n64,split-wg rc=$? $(grep -E 'passed, .* failed' $W/gate.log | tail -1)" >> $S
echo "$(grep -oE '^\[[a-z0-9-]+ ' $W/gate.log | sort | uniq -c | tr '\n' ' ') FAIL lines: $(grep -c FAIL $W/gate.log)" >> $S
tar czf $OUT/logs.tgz -C $W .
echo "elapsed ${SECONDS}s" >> $S
cat $S
