#!/usr/bin/env bash
# Run 373 (issue 39, stages 194-195): the D = 64 wgmma kernels
# warp-specialized (s194) and the producer writing Vt (no prepass, new):
# the gate of both wgmma variants, memcheck and racecheck at D = 64 and
# 128, then old / s194 / new alternated twice.
# Predictions: lab/predictions/2026-11-29-predictions-run373.md.
#   carry: gpu-bundle-diag/r373 (sdpa, s194-sdpa, old-sdpa = run 372's new,
#   gpu_gate and the suites run 374 uses)
set -uo pipefail
W=/tmp/logs373; rm -rf $W; mkdir -p $W /tmp/b373
for b in sdpa s194-sdpa old-sdpa gpu_gate; do xz -dc gpu-bundle-diag/r373/$b.xz > /tmp/b373/$b; chmod +x /tmp/b373/$b; done
S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader > $S
R="--ignored --nocapture --test-threads=1"
pack() { tar czf $OUT/logs.tgz -C $W . ; }
timeout 220 env SDPA_GATE_VARIANTS=wgmma,wgmma-fp8pv /tmp/b373/gpu_gate $R > $W/gate.log 2>&1; echo "gate wgmma,wgmma-fp8pv rc=$? $(grep -E 'passed, .* failed' $W/gate.log | tail -1) FAIL lines: $(grep -c FAIL $W/gate.log)" >> $S
grep -E "FAIL" $W/gate.log | head -5 >> $S
pack
CS=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
for tool in memcheck racecheck; do
  for d in 64 128; do
    timeout 40 "$CS" --tool $tool --print-limit 5 /tmp/b373/sdpa bench --shapes 2,4,700,$d --variants wgmma,wgmma-fp8pv --modes direct --samples 1 --launches 1 > $W/$tool-$d.log 2>&1
    echo "$tool 2,4,700,$d rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $W/$tool-$d.log | tail -1)" >> $S
  done
done
pack
SHAPES="4,16,2048,64 2,16,8192,64 2,16,8192,64,causal 8,16,1024,128 4,16,4096,128 1,16,16384,128 1,16,16384,128,causal"
for round in 1 2; do
  for x in old-sdpa s194-sdpa sdpa; do
    timeout 80 /tmp/b373/$x bench --shapes $SHAPES --variants wgmma,wgmma-fp8pv --modes graph > $W/bench-$x-$round.log 2>&1
    echo "== $x round $round rc=$?" >> $S; grep -E "^wgmma" $W/bench-$x-$round.log | awk '{print $1, $2, $5, $NF}' | tr '\n' ';' >> $S; echo >> $S
  done
done
pack
echo "elapsed ${SECONDS}s" >> $S
cat $S
