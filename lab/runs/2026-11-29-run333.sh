#!/usr/bin/env bash
# Run 333 (issue 42 item 5): strided views (ec1de6d): the strides suite,
# layouts, device_api, the packed fuzz and the gate of the variants that
# read strides; then dense bshd timed against main before the change.
# Predictions: lab/predictions/2026-11-29-predictions-run333.md.
#   carry: gpu-bundle-diag/r333
set -uo pipefail
W=/tmp/logs333; rm -rf $W; mkdir -p $W /tmp/b333
for f in gpu-bundle-diag/r333/*.xz; do b=$(basename $f .xz); xz -dc $f > /tmp/b333/$b; chmod +x /tmp/b333/$b; done
S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader > $S
R="--ignored --nocapture --test-threads=1"
for t in strides layouts device_api; do
  timeout 120 /tmp/b333/$t $R > $W/$t.log 2>&1; echo "$t rc=$? $(grep -E 'test result' $W/$t.log | tail -1)" >> $S
done
grep -E "differ|typed" $W/strides.log >> $S
timeout 150 /tmp/b333/gpu_fuzz_packed $R > $W/fuzz_packed.log 2>&1; echo "gpu_fuzz_packed rc=$? $(grep -E 'test result' $W/fuzz_packed.log | tail -1)" >> $S
timeout 200 env SDPA_GATE_VARIANTS=wgmma,wgmma-fp8pv,decode /tmp/b333/gpu_gate $R > $W/gate.log 2>&1; echo "gate rc=$? $(grep -E 'passed, .* failed' $W/gate.log | tail -1)" >> $S
tar czf $OUT/logs.tgz -C $W .
for round in 1 2; do
  for x in sdpa main-sdpa; do
    timeout 60 /tmp/b333/$x bench --shapes 4,16,4096,128 2,16,8192,64 --layout bshd --variants wgmma,wgmma-fp8pv --modes graph > $W/bench-$x-$round.log 2>&1
    echo "== $x round $round rc=$?" >> $S; grep -E "^wgmma" $W/bench-$x-$round.log | cut -c1-110 >> $S
  done
done
tar czf $OUT/logs.tgz -C $W .
echo "elapsed ${SECONDS}s" >> $S
cat $S
