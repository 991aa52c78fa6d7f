#!/usr/bin/env bash
# Run 362 (issue 39, stage 189): the 192-key wgmma-fp8pv kernel's first
# key block without the per-key mask over its empty slots: old against
# new, release fuzz of its entries, its gate.
# Predictions: lab/predictions/2026-11-29-predictions-run362.md.
#   carry: gpu-bundle-diag/r362 (sdpa, old-sdpa = run 357's, gpu_gate, gpu_fuzz_release)
set -uo pipefail
W=/tmp/logs362; rm -rf $W; mkdir -p $W /tmp/b362
for f in gpu-bundle-diag/r362/*.xz; do b=$(basename $f .xz); xz -dc $f > /tmp/b362/$b; chmod +x /tmp/b362/$b; done
S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader > $S
R="--ignored --nocapture --test-threads=1"
pack() { tar czf $OUT/logs.tgz -C $W . ; }
SHAPES="8,16,2048,128 4,16,4096,128 2,32:8,4096,128 2,16,8192,128 1,16,16384,128 1,16,16384,128,causal"
for round in 1 2 3; do
  for x in old-sdpa sdpa; do
    timeout 60 /tmp/b362/$x bench --shapes $SHAPES --variants wgmma-fp8pv --modes graph > $W/bench-$x-$round.log 2>&1
    echo "== $x round $round rc=$?" >> $S; grep -E "^wgmma" $W/bench-$x-$round.log | awk '{print $2, $5, $NF}' | tr '\n' ';' >> $S; echo >> $S
  done
done
pack
timeout 60 env SDPA_FUZZ_ENTRIES=_fp8pv_long_ /tmp/b362/gpu_fuzz_release $R > $W/fuzz.log 2>&1; echo "release fuzz long entries (10000/entry) rc=$?" >> $S
grep -E "^sdpa_|total|FAIL" $W/fuzz.log | awk '{print $1, $2, $3, $4, $5, $6, $7, $8}' | head -4 >> $S
pack
timeout 140 env SDPA_GATE_VARIANTS=wgmma-fp8pv /tmp/b362/gpu_gate $R > $W/gate.log 2>&1; echo "gate wgmma-fp8pv rc=$? $(grep -E 'passed, .* failed' $W/gate.log | tail -1)" >> $S
echo "$(grep -oE '^\[[a-z0-9-]+ ' $W/gate.log | sort | uniq -c | tr '\n' ' ') FAIL lines: $(grep -c FAIL $W/gate.log)" >> $S
pack
echo "elapsed ${SECONDS}s" >> $S
cat $S
