#!/usr/bin/env bash
# Run 383 (stage 199): the one-role wgmma body (D = 64) on wgmma::feed:
# gate wgmma + wgmma-fp8pv, release fuzz of the D = 64 dense and window
# entries, packed and window suites, racecheck of the 192-key kernel,
# then old / new alternated three times at the D = 64 long shapes.
# Predictions: lab/predictions/2026-11-29-predictions-run383.md.
#   carry: gpu-bundle-diag/r383 (sdpa, old-sdpa = run 380's build, and
#   gpu_gate gpu_fuzz_release packed gpu_fuzz_packed window)
set -uo pipefail
W=/tmp/logs383; rm -rf $W; mkdir -p $W /tmp/b383
for f in gpu-bundle-diag/r383/*.xz; do b=$(basename $f .xz); xz -dc $f > /tmp/b383/$b; chmod +x /tmp/b383/$b; done
S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader > $S
R="--ignored --nocapture --test-threads=1"
pack() { tar czf $OUT/logs.tgz -C $W . ; }
SHAPES="4,16,2048,64 2,16,8192,64 2,16,8192,64,causal"
for round in 1 2 3; do
  for x in old-sdpa sdpa; do
    timeout 80 /tmp/b383/$x bench --shapes $SHAPES --variants wgmma,wgmma-fp8pv --modes graph > $W/bench-$x-$round.log 2>&1
    echo "== $x round $round rc=$?" >> $S; grep -E "^wgmma" $W/bench-$x-$round.log | awk '{print $1, $2, $5}' | tr '\n' ';' >> $S; echo >> $S
  done
done
pack
timeout 220 env SDPA_GATE_VARIANTS=wgmma,wgmma-fp8pv /tmp/b383/gpu_gate $R > $W/gate.log 2>&1; echo "gate wgmma,wgmma-fp8pv rc=$? $(grep -E 'passed, .* failed' $W/gate.log | tail -1) FAIL lines: $(grep -c FAIL $W/gate.log)" >> $S
grep FAIL $W/gate.log | head -3 >> $S
pack
timeout 100 env SDPA_FUZZ_CASES=5000 SDPA_FUZZ_ENTRIES=wgmma_d64,wgmma_fp8pv_d64,fp8pv_window_d64,wgmma_window_d64 /tmp/b383/gpu_fuzz_release $R > $W/fuzz.log 2>&1; echo "release fuzz D = 64 dense + window (5000 each) rc=$?" >> $S
grep -E "cases, " $W/fuzz.log | cut -c1-110 >> $S
timeout 60 /tmp/b383/packed $R > $W/packed.log 2>&1; echo "packed rc=$? $(grep -E 'test result' $W/packed.log | tail -1)" >> $S
timeout 80 env PROPTEST_CASES=64 /tmp/b383/gpu_fuzz_packed $R > $W/fuzz_packed.log 2>&1; echo "gpu_fuzz_packed (64) rc=$? $(grep -E 'test result' $W/fuzz_packed.log | tail -1)" >> $S
timeout 100 /tmp/b383/window $R > $W/window.log 2>&1; echo "window rc=$? $(grep -E 'test result' $W/window.log | tail -1)" >> $S
pack
CS=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
timeout 60 "$CS" --tool racecheck --print-limit 5 /tmp/b383/sdpa bench --shapes 1,2,12345,128 --variants wgmma-fp8pv --modes direct --samples 1 --launches 1 > $W/racecheck-long.log 2>&1
echo "racecheck 1,2,12345,128 fp8pv (192-key kernel) rc=$? $(grep -E 'RACECHECK SUMMARY' $W/racecheck-long.log | tail -1)" >> $S
timeout 40 "$CS" --tool racecheck --print-limit 5 /tmp/b383/sdpa bench --shapes 2,4,700,64 --variants wgmma,wgmma-fp8pv --modes direct --samples 1 --launches 1 > $W/racecheck-d64.log 2>&1
echo "racecheck 2,4,700,64 rc=$? $(grep -E 'RACECHECK SUMMARY' $W/racecheck-d64.log | tail -1)" >> $S
pack
echo "elapsed ${SECONDS}s" >> $S
cat $S
