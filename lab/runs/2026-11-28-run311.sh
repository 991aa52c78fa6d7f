#!/usr/bin/env bash
# Run 311 (issue 42): packed grids with the heads side by side on x and
# each block's sequence found by a warp vote; the cluster merge reverted.
# Correctness (packed, memcheck on it), then alone: serving_time, decode
# (8,32:8,1:32768,128) and the small decode old (r307) against new.
set -uo pipefail
B=gpu-bundle/bin
D=gpu-bundle-diag/r311
rm -rf gpu-bundle && mkdir -p gpu-bundle && tar xJf $D/gb.tar.xz -C gpu-bundle
W=/tmp/logs311; rm -rf $W; mkdir -p $W
S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader > $S
R="--ignored --nocapture --test-threads=1"
run() { local name=$1 t=$2; shift 2; ( timeout $t "$@" >"$W/$name.log" 2>&1; echo "rc=$?" >>"$W/$name.log" ) & }
line() { echo "$1: $(grep -E 'passed, .* failed|test result|ERROR SUMMARY' "$W/$1.log" | tail -3 | tr '\n' ' ') $(tail -1 "$W/$1.log")" >> $S; }
pack() { tar czf $OUT/logs.tgz -C $W . ; }
CS=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
run packed 90 $B/packed $R
run memcheck 90 "$CS" --tool memcheck --error-exitcode 9 $B/packed $R
wait
for f in packed memcheck; do line $f; done
grep -hE "FAIL|panicked" -A2 $W/packed.log | head -6 >> $S
grep -hE "sequences ok|no fault|typed errors" $W/packed.log >> $S
pack
run serving 90 $B/serving_time $R; wait; line serving
grep -E "^\|" $W/serving.log >> $S
pack
for round in 1; do
  for b in old new; do
    X=$B/sdpa; [ $b = old ] && X=$D/sdpa-old
    timeout 25 $X bench --shapes 1,32:8,1:4096,128 --variants decode --modes graph > $W/decode-$b-$round.log 2>&1
    echo "$b-$round $(grep -E '^decode' $W/decode-$b-$round.log | cut -c1-110)" >> $S
  done
done
for b in old new; do
  X=$B/sdpa; [ $b = old ] && X=$D/sdpa-old
  timeout 70 $X bench --shapes 8,32:8,1:32768,128 --variants decode --modes graph > $W/decode32k-$b.log 2>&1
  echo "$b 32k $(grep -E '^decode' $W/decode32k-$b.log | cut -c1-110) $(tail -1 $W/decode32k-$b.log | cut -c1-60)" >> $S
done
pack
echo "elapsed ${SECONDS}s" >> $S
cat $S
