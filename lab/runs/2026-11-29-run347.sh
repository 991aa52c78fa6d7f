#!/usr/bin/env bash
# Run 347 (issue 42 item 6): split's window and softcap twins (355e925) on
# both images: the window tests, the release fuzz, memcheck, and a bench
# against wgmma's twins.
# Predictions: lab/predictions/2026-11-29-predictions-run347.md.
#   carry: gpu-bundle-diag/r347 (sdpa, window, gpu_fuzz_release)
set -uo pipefail
W=/tmp/logs347; rm -rf $W; mkdir -p $W /tmp/b347
for f in gpu-bundle-diag/r347/*.xz; do b=$(basename $f .xz); xz -dc $f > /tmp/b347/$b; chmod +x /tmp/b347/$b; done
S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader > $S
R="--ignored --nocapture --test-threads=1"
timeout 200 /tmp/b347/window $R > $W/window.log 2>&1; echo "window (sm_90a) rc=$? $(grep -E 'test result' $W/window.log | tail -1)" >> $S
grep -E "^split|FAILED|panicked" $W/window.log | head -8 >> $S
timeout 120 env SDPA_IMAGE=sm_89 /tmp/b347/window $R split_windows decode_windows > $W/window89.log 2>&1; echo "window split+decode (sm_89 image) rc=$? $(grep -E 'test result' $W/window89.log | tail -1)" >> $S
grep -E "^split|image|panicked" $W/window89.log | head -5 >> $S
timeout 200 env SDPA_IMAGE=sm_89 /tmp/b347/gpu_fuzz_release $R > $W/fuzz89.log 2>&1; echo "release fuzz sm_89 (10000/entry) rc=$?" >> $S
grep -E "split|total|FAIL" $W/fuzz89.log | tail -12 >> $S
timeout 200 env SDPA_FUZZ_CASES=2000 /tmp/b347/gpu_fuzz_release $R > $W/fuzz90.log 2>&1; echo "release fuzz sm_90a (2000/entry) rc=$?" >> $S
grep -E "split_(window|softcap)|total|FAIL" $W/fuzz90.log | tail -12 >> $S
CS=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
timeout 150 "$CS" --tool memcheck --print-limit 5 /tmp/b347/window $R split_windows > $W/memcheck.log 2>&1; echo "memcheck split window rc=$? $(grep -E 'ERROR SUMMARY' $W/memcheck.log | tail -1)" >> $S
for w in "128,0" "-1,-1"; do
  timeout 60 /tmp/b347/sdpa bench --shapes 1,8,512,64,causal 2,8,256,64,causal 1,16,4096,128,causal --window=$w --softcap 30 --variants split,wgmma --modes graph > $W/bench-$w.log 2>&1
  echo "== bench window $w softcap 30 rc=$?" >> $S; grep -E "^(split|wgmma)" $W/bench-$w.log | awk '{print $1, $2, $5, $NF}' >> $S
done
tar czf $OUT/logs.tgz -C $W .
echo "elapsed ${SECONDS}s" >> $S
cat $S
