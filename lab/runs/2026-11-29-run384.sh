#!/usr/bin/env bash
# Run 384 (stage 200): a call's second kernel (attention after its
# prepass, merge after decode) always a programmatic dependent launch on
# sm_90a: old / new alternated twice (decode small shapes in graph and
# graph-overlap, prefill shapes with a prepass in graph), then overlap,
# determinism, device API, gate decode + wgmma.
# Predictions: lab/predictions/2026-11-29-predictions-run384.md.
#   carry: gpu-bundle-diag/r384 (sdpa, old-sdpa = run 383's build, and
#   gpu_gate device_api overlap determinism)
set -uo pipefail
W=/tmp/logs384; rm -rf $W; mkdir -p $W /tmp/b384
for f in gpu-bundle-diag/r384/*.xz; do b=$(basename $f .xz); xz -dc $f > /tmp/b384/$b; chmod +x /tmp/b384/$b; done
S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader > $S
R="--ignored --nocapture --test-threads=1"
pack() { tar czf $OUT/logs.tgz -C $W . ; }
for round in 1 2; do
  for x in old-sdpa sdpa; do
    timeout 60 /tmp/b384/$x bench --shapes 1,32:8,1:4096,128 1,32:8,1:16384,128 --variants decode --modes graph,graph-overlap > $W/decode-$x-$round.log 2>&1
    echo "== $x decode round $round rc=$?" >> $S; grep -E "^decode" $W/decode-$x-$round.log | awk '{print $2, $4, $5}' | tr '\n' ';' >> $S; echo >> $S
    timeout 80 /tmp/b384/$x bench --shapes 8,16,1024,128 4,16,4096,128 4,16,2048,64 --variants wgmma,wgmma-fp8pv --modes graph > $W/prefill-$x-$round.log 2>&1
    echo "== $x prefill round $round rc=$?" >> $S; grep -E "^wgmma" $W/prefill-$x-$round.log | awk '{print $1, $2, $5}' | tr '\n' ';' >> $S; echo >> $S
  done
done
pack
for t in overlap determinism device_api; do
  timeout 90 /tmp/b384/$t $R > $W/$t.log 2>&1; echo "$t rc=$? $(grep -E 'test result' $W/$t.log | tail -1)" >> $S
done
timeout 200 env SDPA_GATE_VARIANTS=decode,wgmma /tmp/b384/gpu_gate $R > $W/gate.log 2>&1; echo "gate decode,wgmma rc=$? $(grep -E 'passed, .* failed' $W/gate.log | tail -1) FAIL lines: $(grep -c FAIL $W/gate.log)" >> $S
pack
echo "elapsed ${SECONDS}s" >> $S
cat $S
