#!/usr/bin/env bash
# Run 326 (issue 41 item 5; issue 42): the quantizer with a tile's loads in
# flight at once (lab/quantizer.md, step 5): its bit-for-bit suites and
# memcheck, then its time table against the previous kernel (run 323's
# bundle), alternated twice; and run 324's unfinished bench, decode with a
# (1024, 0) window, main (splits over the window's keys) against run 323's
# main, at B = 1 (the B = 8 and 64 caches take minutes to draw on the CPU).
# Last, the small decode beside its torch peers (issue 42's table).
# Predictions: lab/quantizer.md step 5; lab/predictions/2026-11-29-predictions-run326.md.
#   carry: gpu-bundle-diag/r326 (new-*.xz from this commit, old-*.xz from f3405a8)
set -uo pipefail
W=/tmp/logs326; rm -rf $W; mkdir -p $W /tmp/b326
for f in gpu-bundle-diag/r326/*.xz; do b=$(basename $f .xz); xz -dc $f > /tmp/b326/$b; chmod +x /tmp/b326/$b; done
S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader > $S
pack() { tar czf $OUT/logs.tgz -C $W . ; }
R="--ignored --nocapture --test-threads=1"
CS=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
timeout 90 /tmp/b326/new-quantizer_gpu $R codes_and_scales three_tensors bad_inputs > $W/bits.log 2>&1
echo "bits rc=$? $(grep -E 'test result' $W/bits.log | tail -1)" >> $S; grep -E "configurations|launches|panicked" $W/bits.log >> $S
timeout 120 "$CS" --tool memcheck --error-exitcode 9 /tmp/b326/new-quantizer_gpu $R codes_and_scales three_tensors > $W/memcheck.log 2>&1
echo "memcheck rc=$? $(grep -E 'ERROR SUMMARY' $W/memcheck.log | tail -1)" >> $S
pack
for round in 1 2; do
  for x in old new; do
    timeout 90 /tmp/b326/$x-quantizer_gpu $R quantizer_time > $W/time-$x-$round.log 2>&1
    echo "== quantizer $x round $round rc=$?" >> $S; grep -E "^\| [0-9]" $W/time-$x-$round.log >> $S
  done
done
pack
SH="1,32:8,1:32768,128 1,32:8,1:4096,128"
for x in new old; do
  timeout 120 /tmp/b326/$x-sdpa bench --shapes $SH --variants decode --window 1024,0 --modes graph > $W/bench-$x.log 2>&1
  echo "== decode window $x rc=$? ${SECONDS}s" >> $S; grep -E "^decode" $W/bench-$x.log | cut -c1-120 >> $S
done
timeout 60 /tmp/b326/new-sdpa bench --shapes 1,32:8,1:4096,128 --variants decode --modes graph,graph-overlap > $W/small.log 2>&1
echo "== small decode rc=$?" >> $S; grep -E "copy:|^decode" $W/small.log | cut -c1-120 >> $S
timeout 90 python3 scripts/peers.py 1,32:8,1:4096,128 > $W/peers.jsonl 2> $W/peers.err
echo "== peers rc=$?" >> $S; python3 scripts/peers.py --summarize $W/peers.jsonl 2>&1 | grep -E "torch|copy" | head -6 >> $S
pack
echo "elapsed ${SECONDS}s" >> $S
cat $S
