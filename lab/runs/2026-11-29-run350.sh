#!/usr/bin/env bash
# Run 350: split-n64's window and softcap twins: window tests, release fuzz
# (sm_90a, 1000/entry), bench against split's and wgmma's twins.
# Predictions: lab/predictions/2026-11-29-predictions-run350.md.
#   carry: gpu-bundle-diag/r350 (sdpa, window, gpu_fuzz_release)
set -uo pipefail
W=/tmp/logs350; rm -rf $W; mkdir -p $W /tmp/b350
for f in gpu-bundle-diag/r350/*.xz; do b=$(basename $f .xz); xz -dc $f > /tmp/b350/$b; chmod +x /tmp/b350/$b; done
S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader > $S
R="--ignored --nocapture --test-threads=1"
timeout 120 /tmp/b350/window $R > $W/window.log 2>&1; echo "window (sm_90a) rc=$? $(grep -E 'test result' $W/window.log | tail -1)" >> $S
grep -E "^split-n64|panicked|auto" $W/window.log | head -6 >> $S
timeout 120 env SDPA_FUZZ_CASES=1000 /tmp/b350/gpu_fuzz_release $R > $W/fuzz.log 2>&1; echo "release fuzz sm_90a (1000/entry) rc=$?" >> $S
grep -E "split_n64_(window|softcap)|total|FAIL" $W/fuzz.log | tail -10 >> $S
timeout 60 /tmp/b350/sdpa bench --shapes 2,8,256,64,causal 1,8,512,64,causal --window=128,0 --softcap 30 --variants split-n64,split,wgmma --modes graph > $W/bench.log 2>&1
echo "== bench window 128,0 softcap 30 rc=$?" >> $S; grep -E "^(split|wgmma)" $W/bench.log | awk '{print $1, $2, $5}' >> $S
tar czf $OUT/logs.tgz -C $W .
echo "elapsed ${SECONDS}s" >> $S
cat $S
