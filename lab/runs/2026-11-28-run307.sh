#!/usr/bin/env bash
# Run 307 (issue 42): decode after the merge keeps (maximum, sum) per split:
# decode's gate cases, device_api (NaN scales, cache lengths, LSE, paged),
# and the GPU adversarial suite (all-equal at huge scores); then, alone,
# the serving issue's paged target (tests/tests/decode_paged_time.rs).
# Not run in session 36 (its device time ran out). Predictions: all pass;
# paged 64-key pages within 5% of contiguous at (64,32:8,1:8192,128) and
# (8,32:8,1:32768,128) (one table read per key block by the issuing
# thread, off the copies' critical path after the first).
set -uo pipefail
B=gpu-bundle/bin
D=gpu-bundle-diag/r307
mkdir -p gpu-bundle && tar xJf $D/gb.tar.xz -C gpu-bundle
W=$OUT/logs; mkdir -p $W
R="--ignored --nocapture --test-threads=1"
run() { local name=$1; shift; ( timeout 100 "$@" >"$W/$name.log" 2>&1; echo "rc=$?" >>"$W/$name.log" ) & }
run gate env SDPA_GATE_VARIANTS=decode $B/gpu_gate $R
run api $B/device_api $R
run adv $B/adversarial $R
wait
timeout 200 $B/decode_paged_time $R > $W/paged.log 2>&1; echo "rc=$?" >> $W/paged.log
for f in gate api adv paged; do
  echo "$f: $(grep -E 'passed, .* failed|test result' "$W/$f.log" | tail -2 | tr '\n' ' ') $(tail -1 "$W/$f.log")"
done
grep -hE "FAIL|panicked" $W/gate.log $W/api.log $W/adv.log | head -8
grep -hE "decode" $W/adv.log | grep -vE " ok" | head -5
grep -E "^\|" $W/paged.log
echo "elapsed ${SECONDS}s"
