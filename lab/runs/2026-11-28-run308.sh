#!/usr/bin/env bash
# Run 308 (issue 42): packed variable-length batches (the wgmma variants'
# packed twins), the prefill log-sum-exp, decode's splits merged in a
# cluster (one launch), the CLI's decode files. Correctness first, all
# suites side by side (packed, device_api, the whole gate, adversarial,
# cli_decode, memcheck on the packed tests); then alone: the log-sum-exp's
# cost and packed against dense (serving_time), decode old (r307) against
# new, the long record shapes old against new (the LSE epilogue moved
# wgmma's registers), the split family's mission shapes old against new.
# Predictions: lab/predictions/2026-11-28-predictions-run308.md.
set -uo pipefail
B=gpu-bundle/bin
D=gpu-bundle-diag/r308
mkdir -p gpu-bundle && tar xJf $D/gb.tar.xz -C gpu-bundle
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader > "$OUT/gpu.txt"
W=$OUT/logs; mkdir -p $W
R="--ignored --nocapture --test-threads=1"
run() { local name=$1; shift; ( timeout 300 "$@" >"$W/$name.log" 2>&1; echo "rc=$?" >>"$W/$name.log" ) & }
CS=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
run packed $B/packed $R
run api $B/device_api $R
run gate $B/gpu_gate $R
run adv $B/adversarial $R
run cli env SDPA_BIN=$B/sdpa $B/cli_decode $R
run memcheck "$CS" --tool memcheck --error-exitcode 9 $B/packed $R
wait
timeout 120 $B/serving_time $R > $W/serving.log 2>&1; echo "rc=$?" >> $W/serving.log
S="1,32:8,1:4096,128 8,32:8,1:32768,128 64,32:8,1:8192,128 64,32:8,16:8192,128"
L="4,16,4096,128 1,16,16384,128,causal 2,16,8192,64 4,16,2048,64"
M="2,8,256,64 1,8,512,64"
for round in 1 2; do
  for b in old new; do
    X=$B/sdpa; [ $b = old ] && X=$D/sdpa-old
    timeout 60 $X bench --shapes $S --variants decode --modes graph > $W/decode-$b-$round.log 2>&1
    timeout 60 $X bench --shapes $L --variants wgmma,wgmma-fp8pv --modes graph > $W/long-$b-$round.log 2>&1
    timeout 40 $X bench --shapes $M --variants split,split-n64 --modes graph > $W/mission-$b-$round.log 2>&1
  done
done
{
cat $OUT/gpu.txt
for f in packed api gate adv cli memcheck serving; do
  echo "$f: $(grep -E 'passed, .* failed|test result|ERROR SUMMARY' "$W/$f.log" | tail -3 | tr '\n' ' ') $(tail -1 "$W/$f.log")"
done
grep -hE "FAIL|panicked" $W/packed.log $W/api.log $W/gate.log $W/adv.log $W/cli.log | head -10
grep -hE "ok$|sequences ok|InCluster|Kernel\(" $W/packed.log $W/api.log | head -12
grep -E "^\|" $W/serving.log
for round in 1 2; do for b in old new; do
  echo "== $b round $round"
  grep -hE "^(decode|wgmma|split)" $W/decode-$b-$round.log $W/long-$b-$round.log $W/mission-$b-$round.log | cut -c1-100
done; done
echo "elapsed ${SECONDS}s"
} | tee $OUT/summary.txt
