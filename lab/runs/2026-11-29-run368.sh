#!/usr/bin/env bash
# Run 368 (issue 39, stage 192): the three-warpgroup D = 128 wgmma kernels
# (and their packed twins) warp-specialized: old (stage 191's build)
# against new, gates, release fuzz of the changed entries, the packed
# suites, sanitizers, and serving_time's packed and bshd ratios.
# Predictions: lab/predictions/2026-11-29-predictions-run368.md.
#   carry: gpu-bundle-diag/r368 (sdpa, old-sdpa = run 366's new, gpu_gate,
#   gpu_fuzz_release, packed, gpu_fuzz_packed, serving_time)
set -uo pipefail
W=/tmp/logs368; rm -rf $W; mkdir -p $W /tmp/b368
for f in gpu-bundle-diag/r368/*.xz; do b=$(basename $f .xz); xz -dc $f > /tmp/b368/$b; chmod +x /tmp/b368/$b; done
S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader > $S
R="--ignored --nocapture --test-threads=1"
pack() { tar czf $OUT/logs.tgz -C $W . ; }
SHAPES="8,16,1024,128 4,16,4096,128 2,16,4096,128,causal 2,16,8192,128 1,16,16384,128 1,16,16384,128,causal"
for round in 1 2 3; do
  for x in old-sdpa sdpa; do
    timeout 70 /tmp/b368/$x bench --shapes $SHAPES --variants wgmma,wgmma-fp8pv --modes graph > $W/bench-$x-$round.log 2>&1
    echo "== $x round $round rc=$?" >> $S; grep -E "^wgmma" $W/bench-$x-$round.log | awk '{print $1, $2, $5, $NF}' | tr '\n' ';' >> $S; echo >> $S
  done
done
pack
timeout 200 env SDPA_GATE_VARIANTS=wgmma,wgmma-fp8pv /tmp/b368/gpu_gate $R > $W/gate.log 2>&1; echo "gate wgmma,wgmma-fp8pv rc=$? $(grep -E 'passed, .* failed' $W/gate.log | tail -1) FAIL lines: $(grep -c FAIL $W/gate.log)" >> $S
pack
timeout 90 env SDPA_FUZZ_ENTRIES=_wgmma_d128,_wgmma_packed_d128,_wgmma_fp8pv_d128,_wgmma_fp8pv_packed_d128 /tmp/b368/gpu_fuzz_release $R > $W/fuzz.log 2>&1; echo "release fuzz changed entries (10000/entry) rc=$?" >> $S
grep -E "^sdpa_|total|FAIL" $W/fuzz.log | awk '{print $1, $2, $3, $4, $5, $6, $7, $8}' | head -10 >> $S
pack
timeout 60 /tmp/b368/packed $R > $W/packed.log 2>&1; echo "packed rc=$? $(grep -E 'test result' $W/packed.log | tail -1)" >> $S
timeout 60 env PROPTEST_CASES=200 /tmp/b368/gpu_fuzz_packed $R > $W/fuzz_packed.log 2>&1; echo "gpu_fuzz_packed (200) rc=$? $(grep -E 'test result' $W/fuzz_packed.log | tail -1)" >> $S
pack
CS=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
for tool in memcheck racecheck; do
  timeout 40 "$CS" --tool $tool --print-limit 5 /tmp/b368/sdpa bench --shapes 2,4,700,128 --variants wgmma,wgmma-fp8pv --modes direct --samples 1 --launches 1 > $W/$tool.log 2>&1
  echo "$tool 2,4,700,128 rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $W/$tool.log | tail -1)" >> $S
done
pack
timeout 90 /tmp/b368/serving_time $R packed_batch > $W/serving_packed.log 2>&1; echo "serving_time packed rc=$?" >> $S; grep -E "^\|" $W/serving_packed.log | head -8 >> $S
timeout 90 /tmp/b368/serving_time $R bshd > $W/serving_bshd.log 2>&1; echo "serving_time bshd rc=$?" >> $S; grep -E "^\| wgmma" $W/serving_bshd.log | head -8 >> $S
pack
echo "elapsed ${SECONDS}s" >> $S
cat $S
