#!/usr/bin/env bash
# Run 307 (issue 42): decode after the merge keeps (maximum, sum) per split:
# the whole gate (sm_90a) and decode's cases on sm_89, device_api (NaN scales, cache lengths, LSE, paged),
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
run() { local name=$1; shift; ( timeout 240 "$@" >"$W/$name.log" 2>&1; echo "rc=$?" >>"$W/$name.log" ) & }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader > "$OUT/gpu.txt"
run gate $B/gpu_gate $R
run gate89 env SDPA_IMAGE=sm_89 SDPA_GATE_VARIANTS=decode $B/gpu_gate $R
run api $B/device_api $R
run adv $B/adversarial $R
wait
timeout 200 $B/decode_paged_time $R > $W/paged.log 2>&1; echo "rc=$?" >> $W/paged.log
{
cat $OUT/gpu.txt
for f in gate gate89 api adv paged; do
  echo "$f: $(grep -E 'passed, .* failed|test result' "$W/$f.log" | tail -2 | tr '\n' ' ') $(tail -1 "$W/$f.log")"
done
grep -hE "FAIL|panicked" $W/gate.log $W/gate89.log $W/api.log $W/adv.log | head -8
grep -hE "decode" $W/adv.log | grep -vE " ok" | head -5
grep -E "^\|" $W/paged.log
echo "elapsed ${SECONDS}s"
} | tee $OUT/summary.txt
