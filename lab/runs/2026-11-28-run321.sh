#!/usr/bin/env bash
# Run 321 (issue 42), stage 178 (a packed block's sequence as warp-uniform
# values): correctness of every packed path, then its speed beside main's
# previous build (serving_time from run 317's bundle), then the gate.
#   carry: gpu-bundle-diag/r321 (gb.tar.xz), gpu-bundle-diag/r317
set -uo pipefail
B=gpu-bundle/bin
rm -rf gpu-bundle && mkdir -p gpu-bundle && tar xJf gpu-bundle-diag/r321/gb.tar.xz -C gpu-bundle
mkdir -p /tmp/b321 && xz -dc gpu-bundle-diag/r317/serving_time_main.xz > /tmp/b321/serving_old && chmod +x /tmp/b321/serving_old
W=/tmp/logs321; rm -rf $W; mkdir -p $W
S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader > $S
R="--ignored --nocapture --test-threads=1"
run() { local name=$1 t=$2; shift 2; ( timeout $t "$@" >"$W/$name.log" 2>&1; echo "rc=$?" >>"$W/$name.log" ) & }
line() { echo "$1: $(grep -E 'passed, .* failed|test result|ERROR SUMMARY' "$W/$1.log" | tail -2 | tr '\n' ' ') $(tail -1 "$W/$1.log")" >> $S; }
fails() { grep -hE "FAIL|panicked" -A3 "$@" | head -12 >> $S; }
pack() { tar czf $OUT/logs.tgz -C $W . ; }
CS=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
run layouts 90 $B/layouts $R
run memcheck 150 "$CS" --tool memcheck --error-exitcode 9 $B/packed $R
run window 150 $B/window $R
run fuzzpacked 150 $B/gpu_fuzz_packed $R
run packed 90 $B/packed $R
run clipacked 90 $B/cli_packed $R
wait
for f in layouts memcheck window fuzzpacked packed clipacked; do line $f; done
fails $W/layouts.log $W/window.log $W/fuzzpacked.log $W/packed.log $W/clipacked.log
pack
# Speed, alone on the GPU: new build against the previous one, alternated.
for round in 1 2; do
  for x in new old; do
    bin=$B/serving_time; [ $x = old ] && bin=/tmp/b321/serving_old
    timeout 100 $bin bshd $R > $W/bshd-$x-$round.log 2>&1; echo "== bshd $x round $round rc=$?" >> $S
    grep -E "^\| wgmma" $W/bshd-$x-$round.log >> $S
    timeout 100 $bin packed $R > $W/packed-$x-$round.log 2>&1; echo "== packed $x round $round" >> $S
    grep -E "^\| wgmma" $W/packed-$x-$round.log >> $S
  done
done
pack
run gate 250 env SDPA_GATE_VARIANTS=wgmma,wgmma-fp8pv $B/gpu_gate $R
wait
line gate; fails $W/gate.log
pack
echo "elapsed ${SECONDS}s" >> $S
cat $S
