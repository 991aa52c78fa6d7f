#!/usr/bin/env bash
# Run 309 (issue 42): run 308 again, cut to fit: run 308 ran past the
# call's 600 s (the bench's decode shapes hit their 60 s timeouts, ten
# logs came back of eighteen, no summary). Correctness side by side
# (packed, memcheck on the packed tests, the gate's wgmma, wgmma-fp8pv
# and decode cases), then alone: device_api (its free-memory check reads
# the whole device, so alone), serving_time, the small decode old (r307)
# against new. The summary is appended as each phase ends; the logs come
# back as one archive. Same build and predictions as run 308.
set -uo pipefail
B=gpu-bundle/bin
D=gpu-bundle-diag/r308
[ -x $B/packed ] || { mkdir -p gpu-bundle && tar xJf $D/gb.tar.xz -C gpu-bundle; }
W=/tmp/logs309; rm -rf $W; mkdir -p $W
S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader > $S
R="--ignored --nocapture --test-threads=1"
run() { local name=$1 t=$2; shift 2; ( timeout $t "$@" >"$W/$name.log" 2>&1; echo "rc=$?" >>"$W/$name.log" ) & }
line() { echo "$1: $(grep -E 'passed, .* failed|test result|ERROR SUMMARY' "$W/$1.log" | tail -3 | tr '\n' ' ') $(tail -1 "$W/$1.log")" >> $S; }
pack() { tar czf $OUT/logs.tgz -C $W . ; }
CS=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
run packed 170 $B/packed $R
run memcheck 170 "$CS" --tool memcheck --error-exitcode 9 $B/packed $R
run gate 170 env SDPA_GATE_VARIANTS=wgmma,wgmma-fp8pv,decode $B/gpu_gate $R
wait
for f in packed memcheck gate; do line $f; done
grep -hE "FAIL|panicked" $W/packed.log $W/gate.log | head -6 >> $S
grep -hE "sequences ok|no fault|typed errors" $W/packed.log >> $S
pack
run api 60 $B/device_api $R; wait; line api
grep -hE "panicked" -A3 $W/api.log | head -4 >> $S
run serving 90 $B/serving_time $R; wait; line serving
grep -E "^\|" $W/serving.log >> $S
pack
for round in 1 2; do
  for b in old new; do
    X=$B/sdpa; [ $b = old ] && X=$D/sdpa-old
    timeout 25 $X bench --shapes 1,32:8,1:4096,128 --variants decode --modes graph > $W/decode-$b-$round.log 2>&1
    echo "$b-$round $(grep -E '^decode' $W/decode-$b-$round.log | cut -c1-110)" >> $S
  done
done
pack
echo "elapsed ${SECONDS}s" >> $S
cat $S
