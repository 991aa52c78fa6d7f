#!/usr/bin/env bash
# Run 376 (issue 39, stage 196): (1,16,16384,128) causal old / new
# alternated four times with the clocks after each call; the window suite
# and the packed fuzz with longer limits than run 375's.
# Predictions: lab/predictions/2026-11-29-predictions-run376.md.
#   carry: gpu-bundle-diag/r376 (sdpa, old-sdpa, window, gpu_fuzz_packed)
set -uo pipefail
W=/tmp/logs376; rm -rf $W; mkdir -p $W /tmp/b376
for f in gpu-bundle-diag/r376/*.xz; do b=$(basename $f .xz); xz -dc $f > /tmp/b376/$b; chmod +x /tmp/b376/$b; done
S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader > $S
R="--ignored --nocapture --test-threads=1"
for round in 1 2 3 4; do
  for x in old-sdpa sdpa; do
    timeout 60 /tmp/b376/$x bench --shapes 1,16,16384,128,causal 2,16,8192,128,causal --variants wgmma,wgmma-fp8pv --modes graph > $W/bench-$x-$round.log 2>&1
    echo "== $x round $round rc=$? $(grep -E "^wgmma" $W/bench-$x-$round.log | awk '{print $1, $2, $5}' | tr '\n' ';') clocks: $(nvidia-smi --query-gpu=clocks.sm,power.draw,temperature.gpu --format=csv,noheader)" >> $S
  done
done
tar czf $OUT/logs.tgz -C $W .
timeout 150 /tmp/b376/window $R > $W/window.log 2>&1; echo "window rc=$? $(grep -E 'test result' $W/window.log | tail -1)" >> $S
grep -E "panicked|FAIL" $W/window.log | head -3 >> $S
timeout 150 env PROPTEST_CASES=64 /tmp/b376/gpu_fuzz_packed $R > $W/fuzz_packed.log 2>&1; echo "gpu_fuzz_packed (64) rc=$? $(grep -E 'test result' $W/fuzz_packed.log | tail -1)" >> $S
grep -E "panicked|FAIL|minimal" $W/fuzz_packed.log | head -3 >> $S
tar czf $OUT/logs.tgz -C $W .
echo "elapsed ${SECONDS}s" >> $S
cat $S
