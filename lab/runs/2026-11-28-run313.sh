#!/usr/bin/env bash
# Run 313 (issue 42): [B, S, H, D] tensors on the wgmma packed twins.
# Correctness (layouts, memcheck on it, packed, cli_packed, the gate's
# wgmma and wgmma-fp8pv), then alone: serving_time's bshd-against-bhsd
# timing.
set -uo pipefail
B=gpu-bundle/bin
D=gpu-bundle-diag/r313
rm -rf gpu-bundle && mkdir -p gpu-bundle && tar xJf $D/gb.tar.xz -C gpu-bundle
W=/tmp/logs313; rm -rf $W; mkdir -p $W
S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader > $S
R="--ignored --nocapture --test-threads=1"
run() { local name=$1 t=$2; shift 2; ( timeout $t "$@" >"$W/$name.log" 2>&1; echo "rc=$?" >>"$W/$name.log" ) & }
line() { echo "$1: $(grep -E 'passed, .* failed|test result|ERROR SUMMARY' "$W/$1.log" | tail -3 | tr '\n' ' ') $(tail -1 "$W/$1.log")" >> $S; }
pack() { tar czf $OUT/logs.tgz -C $W . ; }
CS=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
run layouts 90 $B/layouts $R
run memcheck 120 "$CS" --tool memcheck --error-exitcode 9 $B/layouts $R
run packed 90 $B/packed $R
run clipacked 90 $B/cli_packed $R
run gate 200 env SDPA_GATE_VARIANTS=wgmma,wgmma-fp8pv $B/gpu_gate $R
wait
for f in layouts memcheck packed clipacked gate; do line $f; done
grep -hE "FAIL|panicked" -A3 $W/layouts.log $W/packed.log $W/clipacked.log $W/gate.log | head -12 >> $S
grep -hE "matches f64|typed errors" $W/layouts.log >> $S
pack
run serving 150 $B/serving_time bshd $R; wait; line serving
grep -E "^\|" $W/serving.log >> $S
pack
echo "elapsed ${SECONDS}s" >> $S
cat $S
