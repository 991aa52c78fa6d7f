#!/usr/bin/env bash
# Run 388 (stage 201): decode's merge kernel with each batch's statistics
# and partial rows loaded together: old / new alternated twice, then the
# decode gate and the device API suite.
# Predictions: lab/predictions/2026-11-29-predictions-run388.md.
#   carry: gpu-bundle-diag/r388 (sdpa, old-sdpa = run 384's build,
#   gpu_gate, device_api)
set -uo pipefail
W=/tmp/logs388; rm -rf $W; mkdir -p $W /tmp/b388
for f in gpu-bundle-diag/r388/*.xz; do b=$(basename $f .xz); xz -dc $f > /tmp/b388/$b; chmod +x /tmp/b388/$b; done
S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader > $S
R="--ignored --nocapture --test-threads=1"
for round in 1 2; do
  for x in old-sdpa sdpa; do
    timeout 60 /tmp/b388/$x bench --shapes 1,32:8,1:256,128 1,32:8,1:1024,128 1,32:8,1:4096,128 1,32:8,1:16384,128 8,32:8,1:4096,128 --variants decode --modes graph,graph-overlap > $W/bench-$x-$round.log 2>&1
    echo "== $x round $round rc=$?" >> $S; grep -E "^decode" $W/bench-$x-$round.log | awk '{print $2, $4, $5}' | tr '\n' ';' >> $S; echo >> $S
  done
done
timeout 100 env SDPA_GATE_VARIANTS=decode /tmp/b388/gpu_gate $R > $W/gate.log 2>&1; echo "gate decode rc=$? $(grep -E 'passed, .* failed' $W/gate.log | tail -1) FAIL lines: $(grep -c FAIL $W/gate.log)" >> $S
timeout 60 /tmp/b388/device_api $R > $W/api.log 2>&1; echo "device_api rc=$? $(grep -E 'test result' $W/api.log | tail -1)" >> $S
tar czf $OUT/logs.tgz -C $W .
echo "elapsed ${SECONDS}s" >> $S
cat $S
