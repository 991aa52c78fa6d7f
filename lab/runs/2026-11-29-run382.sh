#!/usr/bin/env bash
# Run 382 (issue 42, stage 198b): decode at D = 128 whose key splits merge
# inside a thread-block cluster of up to 16 blocks, 4 key groups each
# (sdpa_decode_cluster_d128): its checks
# first (decode gate, device API, window, determinism, overlap,
# adversarial, release fuzz of the new entries, memcheck and racecheck),
# then old / stage-198 (run 381) / new decode times alternated three times (small shapes, graph
# and graph-overlap), then the batched shapes once each.
# Predictions: lab/predictions/2026-11-29-predictions-run382.md.
#   carry: gpu-bundle-diag/r382 (sdpa, old-sdpa = run 380's build,
#   s198-sdpa = run 381's, and the
#   test binaries gpu_gate device_api window determinism overlap
#   adversarial gpu_fuzz_release)
set -uo pipefail
W=/tmp/logs382; rm -rf $W; mkdir -p $W /tmp/b382
for f in gpu-bundle-diag/r382/*.xz; do b=$(basename $f .xz); xz -dc $f > /tmp/b382/$b; chmod +x /tmp/b382/$b; done
S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader > $S
R="--ignored --nocapture --test-threads=1"
pack() { tar czf $OUT/logs.tgz -C $W . ; }
timeout 120 env SDPA_GATE_VARIANTS=decode /tmp/b382/gpu_gate $R > $W/gate.log 2>&1; echo "gate decode rc=$? $(grep -E 'passed, .* failed' $W/gate.log | tail -1) FAIL lines: $(grep -c FAIL $W/gate.log)" >> $S
grep FAIL $W/gate.log | head -3 >> $S
grep -E "decode-gqa-d128|decode-causal-sq4|decode-split-tail" $W/gate.log | head -4 | cut -c1-160 >> $S
timeout 90 /tmp/b382/device_api $R > $W/api.log 2>&1; echo "device_api rc=$? $(grep -E 'test result' $W/api.log | tail -1)" >> $S
grep -E "splits\)" $W/api.log | head -5 >> $S
pack
timeout 60 env SDPA_FUZZ_ENTRIES=decode_cluster /tmp/b382/gpu_fuzz_release $R > $W/fuzz.log 2>&1; echo "release fuzz decode_cluster rc=$?" >> $S
grep -E "decode_cluster|total" $W/fuzz.log | tail -3 | cut -c1-160 >> $S
for t in determinism overlap adversarial; do
  timeout 60 /tmp/b382/$t $R > $W/$t.log 2>&1; echo "$t rc=$? $(grep -E 'test result' $W/$t.log | tail -1)" >> $S
done
pack
CS=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
for tool in memcheck racecheck; do
  timeout 40 "$CS" --tool $tool --print-limit 5 /tmp/b382/sdpa bench --shapes 1,32:8,1:4096,128 2,8:2,3:1500,128 --variants decode --modes direct --samples 1 --launches 1 > $W/$tool.log 2>&1
  echo "$tool decode rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $W/$tool.log | tail -1)" >> $S
done
pack
for round in 1 2 3; do
  for x in old-sdpa s198-sdpa sdpa; do
    timeout 60 /tmp/b382/$x bench --shapes 1,32:8,1:4096,128 1,32:8,1:16384,128 --variants decode --modes graph,graph-overlap > $W/small-$x-$round.log 2>&1
    echo "== $x small round $round rc=$?" >> $S; grep -E "^decode" $W/small-$x-$round.log | awk '{print $2, $4, $5}' | tr '\n' ';' >> $S; echo >> $S
  done
done
pack
for x in sdpa old-sdpa; do
  timeout 110 /tmp/b382/$x bench --shapes 8,32:8,1:32768,128 64,32:8,1:8192,128 --variants decode --modes graph > $W/big-$x.log 2>&1
  echo "== $x big rc=$? ${SECONDS}s" >> $S; grep -E "^decode" $W/big-$x.log | awk '{print $2, $4, $5}' | tr '\n' ';' >> $S; echo >> $S
done
pack
echo "elapsed ${SECONDS}s" >> $S
cat $S
