#!/usr/bin/env bash
# Run 369 (issue 39): the record on stage 192's build (every kept variant
# at the eight record shapes, the peers in the same call); the packed
# fuzz at 200 batches per twin (run 368 ran out of time before
# wgmma-fp8pv D = 128's); memcheck of the packed suite; the 192-key
# kernel's causal control re-timed (old = stage 191's build).
# Predictions: lab/predictions/2026-11-29-predictions-run369.md.
#   carry: gpu-bundle-diag/r369 (sdpa, old-sdpa, gpu_fuzz_packed, packed), .whl
set -uo pipefail
W=/tmp/logs369; rm -rf $W; mkdir -p $W /tmp/b369
for f in gpu-bundle-diag/r369/*.xz; do b=$(basename $f .xz); xz -dc $f > /tmp/b369/$b; chmod +x /tmp/b369/$b; done
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site
S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader > $S
R="--ignored --nocapture --test-threads=1"
pack() { tar czf $OUT/logs.tgz -C $W . ; }
SH="2,8,256,64 1,8,512,64 4,16,2048,64 2,16,8192,64 2,16,8192,64,causal 4,16,4096,128 1,16,16384,128 1,16,16384,128,causal"
REC=$OUT/rec; mkdir -p $REC
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.draw,temperature.gpu,serial --format=csv
  /tmp/b369/sdpa info; } > "$REC/device.txt" 2>&1
# shellcheck disable=SC2086
timeout 150 python3 scripts/peers.py $SH > "$REC/peers.jsonl" 2>> "$REC/device.txt"; echo "peers rc=$?" >> $S
# shellcheck disable=SC2086
timeout 150 /tmp/b369/sdpa bench --variants mma,wgmma,wgmma-fp8pv,split,split-wg,split-n64 \
  --shapes $SH --modes graph --json "$REC/bench-variants.json" > "$REC/bench.txt" 2>&1; echo "bench rc=$?" >> $S
grep -E "^(wgmma|split-n64) .* graph" "$REC/bench.txt" | awk '{print $1, $2, $5}' | tr '\n' ';' >> $S; echo >> $S
tar czf "$OUT/rec.tgz" -C "$OUT" rec && rm -r "$REC"
timeout 160 env PROPTEST_CASES=200 /tmp/b369/gpu_fuzz_packed $R > $W/fuzz_packed.log 2>&1; echo "gpu_fuzz_packed (200) rc=$?" >> $S
grep -E "batches passed|FAIL|panicked" $W/fuzz_packed.log | head -10 >> $S
pack
CS=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
timeout 150 "$CS" --tool memcheck --print-limit 5 /tmp/b369/packed $R > $W/memcheck_packed.log 2>&1
echo "memcheck packed suite rc=$? $(grep -E 'ERROR SUMMARY' $W/memcheck_packed.log | tail -1) $(grep -E 'test result' $W/memcheck_packed.log | tail -1)" >> $S
pack
for round in 1 2 3 4; do
  for x in old-sdpa sdpa; do
    timeout 30 /tmp/b369/$x bench --shapes 1,16,16384,128,causal --variants wgmma-fp8pv --modes graph > $W/ctl-$x-$round.log 2>&1
    echo "$x $round $(grep -E '^wgmma' $W/ctl-$x-$round.log | awk '{print $5, $6, $7}')" >> $S
  done
done
pack
echo "elapsed ${SECONDS}s" >> $S
cat $S
