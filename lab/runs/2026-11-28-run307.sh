#!/usr/bin/env bash
# Run 307 (issue 42): decode after the merge keeps (maximum, sum) per split:
# decode's gate cases, device_api (NaN scales, cache lengths, LSE, paged),
# and the GPU adversarial suite (all-equal at huge scores), with the last
# device seconds of the session. Predictions: all pass.
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
for f in gate api adv; do
  echo "$f: $(grep -E 'passed, .* failed|test result' "$W/$f.log" | tail -2 | tr '\n' ' ') $(tail -1 "$W/$f.log")"
done
grep -hE "FAIL|panicked" $W/gate.log $W/api.log $W/adv.log | head -8
grep -hE "decode" $W/adv.log | grep -vE " ok" | head -5
echo "elapsed ${SECONDS}s"
