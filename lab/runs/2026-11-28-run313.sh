#!/usr/bin/env bash
# Run 313 (issue 42), correctness of what session 38 built without a GPU:
# [B, S, H, D] tensors on the wgmma packed twins (layouts, memcheck on it,
# gpu_fuzz_packed, the gate's bshd pass, adversarial's bshd pass), sliding
# windows and softcap (window), and the suites the launch path's changes
# touch (packed, cli_packed, device_api, the gate's wgmma, wgmma-fp8pv and
# decode). Speed is run 314's. Each phase appends to $OUT/summary.txt and
# refreshes $OUT/logs.tgz, so a timeout keeps what ran.
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
fails() { grep -hE "FAIL|panicked" -A3 "$@" | head -12 >> $S; }
pack() { tar czf $OUT/logs.tgz -C $W . ; }
CS=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
# Phase 1: the new paths.
run layouts 90 $B/layouts $R
run memcheck 150 "$CS" --tool memcheck --error-exitcode 9 $B/layouts $R
run window 150 $B/window $R
run fuzzpacked 150 $B/gpu_fuzz_packed $R
wait
for f in layouts memcheck window fuzzpacked; do line $f; done
fails $W/layouts.log $W/window.log $W/fuzzpacked.log
grep -hE "matches f64|typed errors|windows .* ok|batches passed" $W/layouts.log $W/window.log $W/fuzzpacked.log >> $S
pack
# Phase 2: what the launch path's changes touch.
run packed 90 $B/packed $R
run clipacked 90 $B/cli_packed $R
run gate 240 env SDPA_GATE_VARIANTS=wgmma,wgmma-fp8pv,decode $B/gpu_gate $R
wait
for f in packed clipacked gate; do line $f; done
fails $W/packed.log $W/clipacked.log $W/gate.log
pack
run api 90 $B/device_api $R
run adv 150 $B/adversarial $R
wait
for f in api adv; do line $f; done
fails $W/api.log $W/adv.log
pack
echo "elapsed ${SECONDS}s" >> $S
cat $S
