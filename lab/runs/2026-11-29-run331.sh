#!/usr/bin/env bash
# Run 331 (issue 42): branch h/decode-small-splits (decode splits of one
# key block per key group, four blocks per SM; host only): its decode gate,
# device_api, window suite and GPU fuzz, then the decode shapes against
# main's sdpa (built from de3d76b: the same kernels and decode plan as
# main when this was written), alternated, with graph and graph-overlap.
# Predictions: lab/predictions/2026-11-29-predictions-run331.md.
#   carry: gpu-bundle-diag/r331 (branch binaries: sdpa gpu_gate device_api
#   window gpu_fuzz; main-sdpa)
set -uo pipefail
W=/tmp/logs331; rm -rf $W; mkdir -p $W /tmp/b331
for f in gpu-bundle-diag/r331/*.xz; do b=$(basename $f .xz); xz -dc $f > /tmp/b331/$b; chmod +x /tmp/b331/$b; done
S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader > $S
R="--ignored --nocapture --test-threads=1"
timeout 120 env SDPA_GATE_VARIANTS=decode /tmp/b331/gpu_gate $R > $W/gate.log 2>&1; echo "gate decode rc=$? $(grep -E 'passed, .* failed' $W/gate.log | tail -1)" >> $S
timeout 90 /tmp/b331/device_api $R > $W/api.log 2>&1; echo "device_api rc=$? $(grep -E 'test result' $W/api.log | tail -1)" >> $S
timeout 120 /tmp/b331/window $R > $W/window.log 2>&1; echo "window rc=$? $(grep -E 'test result' $W/window.log | tail -1)" >> $S
timeout 120 /tmp/b331/gpu_fuzz $R > $W/fuzz.log 2>&1; echo "gpu_fuzz rc=$? $(grep -E 'test result' $W/fuzz.log | tail -1)" >> $S
tar czf $OUT/logs.tgz -C $W .
for round in 1 2; do
  for x in sdpa main-sdpa; do
    timeout 60 /tmp/b331/$x bench --shapes 1,32:8,1:4096,128 1,32:8,1:16384,128 --variants decode --modes graph,graph-overlap > $W/small-$x-$round.log 2>&1
    echo "== $x small round $round rc=$?" >> $S; grep -E "^decode" $W/small-$x-$round.log | cut -c1-120 >> $S
  done
done
for x in sdpa main-sdpa; do
  timeout 150 /tmp/b331/$x bench --shapes 8,32:8,1:32768,128 64,32:8,1:8192,128 --variants decode --modes graph > $W/big-$x.log 2>&1
  echo "== $x big rc=$? ${SECONDS}s" >> $S; grep -E "copy:|^decode" $W/big-$x.log | cut -c1-120 >> $S
done
tar czf $OUT/logs.tgz -C $W .
echo "elapsed ${SECONDS}s" >> $S
cat $S
