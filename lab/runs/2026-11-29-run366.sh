#!/usr/bin/env bash
# Run 366 (issue 39, stage 191): the 192-key wgmma-fp8pv kernel
# warp-specialized (a producer warpgroup issues every copy): old against
# new, its gate, release fuzz of its entries, sanitizers on one launch,
# and the suites that run every kernel of the table.
# Predictions: lab/predictions/2026-11-29-predictions-run366.md.
#   carry: gpu-bundle-diag/r366 (sdpa, old-sdpa = aa1513e's, gpu_gate,
#   gpu_fuzz_release, adversarial, determinism, overlap)
set -uo pipefail
W=/tmp/logs366; rm -rf $W; mkdir -p $W /tmp/b366
for f in gpu-bundle-diag/r366/*.xz; do b=$(basename $f .xz); xz -dc $f > /tmp/b366/$b; chmod +x /tmp/b366/$b; done
S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader > $S
R="--ignored --nocapture --test-threads=1"
pack() { tar czf $OUT/logs.tgz -C $W . ; }
SHAPES="8,16,2048,128 4,16,4096,128 2,32:8,4096,128 2,16,8192,128 1,16,16384,128 1,16,16384,128,causal"
for round in 1 2 3; do
  for x in old-sdpa sdpa; do
    timeout 60 /tmp/b366/$x bench --shapes $SHAPES --variants wgmma-fp8pv --modes graph > $W/bench-$x-$round.log 2>&1
    echo "== $x round $round rc=$?" >> $S; grep -E "^wgmma" $W/bench-$x-$round.log | awk '{print $2, $5, $NF}' | tr '\n' ';' >> $S; echo >> $S
  done
done
pack
timeout 170 env SDPA_GATE_VARIANTS=wgmma-fp8pv /tmp/b366/gpu_gate $R > $W/gate.log 2>&1; echo "gate wgmma-fp8pv rc=$? $(grep -E 'passed, .* failed' $W/gate.log | tail -1)" >> $S
echo "FAIL lines: $(grep -c FAIL $W/gate.log)" >> $S; grep -E "long-(gqa|causal-gqa|no-keys)" $W/gate.log | head -6 >> $S
pack
timeout 60 env SDPA_FUZZ_ENTRIES=_fp8pv_long_ /tmp/b366/gpu_fuzz_release $R > $W/fuzz.log 2>&1; echo "release fuzz long entries (10000/entry) rc=$?" >> $S
grep -E "^sdpa_|total|FAIL" $W/fuzz.log | awk '{print $1, $2, $3, $4, $5, $6, $7, $8}' | head -4 >> $S
pack
CS=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
for tool in memcheck racecheck synccheck; do
  timeout 50 "$CS" --tool $tool --print-limit 5 /tmp/b366/sdpa bench --shapes 2,4,2200,128 --variants wgmma-fp8pv --modes direct --samples 1 --launches 1 > $W/$tool.log 2>&1
  echo "$tool 2,4,2200,128 rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $W/$tool.log | tail -1)" >> $S
done
pack
for t in adversarial determinism overlap; do
  timeout 70 /tmp/b366/$t $R > $W/$t.log 2>&1; echo "$t rc=$? $(grep -E 'test result' $W/$t.log | tail -1)" >> $S
  grep -E "panicked|FAIL" $W/$t.log | head -3 >> $S
  pack
done
echo "elapsed ${SECONDS}s" >> $S
cat $S
