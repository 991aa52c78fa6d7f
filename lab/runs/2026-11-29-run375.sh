#!/usr/bin/env bash
# Run 375 (issue 39, stage 196): K by tensor copies at D = 128 (the
# prepass writes Vt only): old / new alternated three times, then the
# gate, release fuzz of the D = 128 entries, the suites and sanitizers.
# Predictions: lab/predictions/2026-11-29-predictions-run375.md.
#   carry: gpu-bundle-diag/r375 (sdpa, old-sdpa = run 372's new, gpu_gate,
#   gpu_fuzz_release, packed, gpu_fuzz_packed, window, adversarial,
#   layouts, strides)
set -uo pipefail
W=/tmp/logs375; rm -rf $W; mkdir -p $W /tmp/b375
for f in gpu-bundle-diag/r375/*.xz; do b=$(basename $f .xz); xz -dc $f > /tmp/b375/$b; chmod +x /tmp/b375/$b; done
S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader > $S
R="--ignored --nocapture --test-threads=1"
pack() { tar czf $OUT/logs.tgz -C $W . ; }
SHAPES="8,16,1024,128 4,16,4096,128 2,16,4096,128,causal 1,16,16384,128 1,16,16384,128,causal 4,16,2048,64"
for round in 1 2 3; do
  for x in old-sdpa sdpa; do
    timeout 80 /tmp/b375/$x bench --shapes $SHAPES --variants wgmma,wgmma-fp8pv --modes graph > $W/bench-$x-$round.log 2>&1
    echo "== $x round $round rc=$?" >> $S; grep -E "^wgmma" $W/bench-$x-$round.log | awk '{print $1, $2, $5, $NF}' | tr '\n' ';' >> $S; echo >> $S
  done
done
pack
timeout 200 env SDPA_GATE_VARIANTS=wgmma,wgmma-fp8pv /tmp/b375/gpu_gate $R > $W/gate.log 2>&1; echo "gate wgmma,wgmma-fp8pv rc=$? $(grep -E 'passed, .* failed' $W/gate.log | tail -1) FAIL lines: $(grep -c FAIL $W/gate.log)" >> $S
grep FAIL $W/gate.log | head -3 >> $S
pack
timeout 120 env SDPA_FUZZ_ENTRIES=wgmma_d128_bf16,fp8pv_d128_bf16,fp8pv_long_d128 /tmp/b375/gpu_fuzz_release $R > $W/fuzz.log 2>&1; echo "release fuzz (wgmma d128 bf16, fp8pv d128 bf16, fp8pv long d128 both) rc=$?" >> $S
grep -E "total|FAIL|failures" $W/fuzz.log | grep -v " 0 failures" | head -5 >> $S; grep -E "total" $W/fuzz.log | tail -1 >> $S
pack
timeout 60 /tmp/b375/packed $R > $W/packed.log 2>&1; echo "packed rc=$? $(grep -E 'test result' $W/packed.log | tail -1)" >> $S
timeout 60 env PROPTEST_CASES=100 /tmp/b375/gpu_fuzz_packed $R > $W/fuzz_packed.log 2>&1; echo "gpu_fuzz_packed (100) rc=$? $(grep -E 'test result' $W/fuzz_packed.log | tail -1)" >> $S
for t in window adversarial layouts strides; do
  timeout 60 /tmp/b375/$t $R > $W/$t.log 2>&1; echo "$t rc=$? $(grep -E 'test result' $W/$t.log | tail -1)" >> $S
done
pack
CS=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
for tool in memcheck racecheck; do
  timeout 40 "$CS" --tool $tool --print-limit 5 /tmp/b375/sdpa bench --shapes 2,4,700,128 --variants wgmma,wgmma-fp8pv --modes direct --samples 1 --launches 1 > $W/$tool.log 2>&1
  echo "$tool 2,4,700,128 rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $W/$tool.log | tail -1)" >> $S
done
timeout 60 "$CS" --tool memcheck --print-limit 5 /tmp/b375/sdpa bench --shapes 1,2,12345,128 --variants wgmma-fp8pv --modes direct --samples 1 --launches 1 > $W/memcheck-long.log 2>&1
echo "memcheck 1,2,12345,128 fp8pv (192-key kernel) rc=$? $(grep -E 'ERROR SUMMARY' $W/memcheck-long.log | tail -1)" >> $S
pack
echo "elapsed ${SECONDS}s" >> $S
cat $S
