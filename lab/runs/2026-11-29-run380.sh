#!/usr/bin/env bash
# Run 380 (issue 39): `wgmma-fp8pv` D = 128's 192-key kernel from 8192
# keys, never causal (was 2048 / 10240): its gate with the new cases
# (first blocks with 0, 1, 2 empty slots at 8250-8350 keys, GQA), and the
# record's D = 128 rows old / new, two rounds.
# Predictions: lab/predictions/2026-11-29-predictions-run380.md.
#   carry: gpu-bundle-diag/r380 (sdpa, old-sdpa = run 379's sdpa, gpu_gate)
set -uo pipefail
W=/tmp/logs380; rm -rf $W; mkdir -p $W /tmp/b380
for f in gpu-bundle-diag/r380/*.xz; do b=$(basename $f .xz); xz -dc $f > /tmp/b380/$b; chmod +x /tmp/b380/$b; done
S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader > $S
R="--ignored --nocapture --test-threads=1"
timeout 150 env SDPA_GATE_VARIANTS=wgmma-fp8pv /tmp/b380/gpu_gate $R > $W/gate.log 2>&1; echo "gate wgmma-fp8pv rc=$? $(grep -E 'passed, .* failed' $W/gate.log | tail -1) FAIL lines: $(grep -c FAIL $W/gate.log)" >> $S
grep FAIL $W/gate.log | head -3 >> $S
for round in 1 2; do
  for x in old-sdpa sdpa; do
    timeout 40 /tmp/b380/$x bench --shapes 4,16,4096,128 1,16,16384,128 1,16,16384,128,causal --variants wgmma-fp8pv --modes graph > $W/bench-$x-$round.log 2>&1
    echo "== $x round $round rc=$? $(grep -E "^wgmma" $W/bench-$x-$round.log | awk '{print $2, $5}' | tr '\n' ';')" >> $S
  done
done
tar czf $OUT/logs.tgz -C $W .
echo "elapsed ${SECONDS}s" >> $S
cat $S
