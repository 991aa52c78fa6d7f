#!/usr/bin/env bash
# Run 317 (issue 42): the window tests with wgmma-fp8pv judged by the
# per-element E4M3 P·V bound; and an A/B of the packed twins' grid order:
# main (heads side by side on x) against branch x/heads-y (a head's blocks
# side by side, heads on y), on serving_time's bshd table and its packed
# batch, alternated twice.
#   carry: gpu-bundle-diag/r317 (window.xz, serving_time_main.xz,
#   serving_time_headsy.xz)
set -uo pipefail
D=gpu-bundle-diag/r317
W=/tmp/logs317; rm -rf $W; mkdir -p $W /tmp/b317
for f in window serving_time_main serving_time_headsy; do xz -dc $D/$f.xz > /tmp/b317/$f; chmod +x /tmp/b317/$f; done
S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader > $S
R="--ignored --nocapture --test-threads=1"
timeout 150 /tmp/b317/window $R > $W/window.log 2>&1; echo "window rc=$? $(grep -E 'test result' $W/window.log | tail -1)" >> $S
grep -hE "panicked" -A2 $W/window.log | head -8 >> $S
for round in 1 2; do
  for x in main headsy; do
    timeout 120 /tmp/b317/serving_time_$x bshd $R > $W/bshd-$x-$round.log 2>&1
    echo "== bshd $x round $round rc=$?" >> $S; grep -E "^\| wgmma" $W/bshd-$x-$round.log >> $S
    timeout 120 /tmp/b317/serving_time_$x packed $R > $W/packed-$x-$round.log 2>&1
    echo "== packed $x round $round rc=$?" >> $S; grep -E "^\||TFLOP|ratio|rate" $W/packed-$x-$round.log | tail -6 >> $S
  done
done
tar czf $OUT/logs.tgz -C $W .
echo "elapsed ${SECONDS}s" >> $S
cat $S
