#!/usr/bin/env bash
# Run 352: the gate on the split family, mma and decode; the release fuzz
# at 10,000 cases per entry over last session's score twins; memcheck on
# the split and mma window tests; mma's twins timed.
# Predictions: lab/predictions/2026-11-29-predictions-run352.md.
#   carry: gpu-bundle-diag/r352 (gpu_gate, gpu_fuzz_release, window) and r351 (sdpa)
set -uo pipefail
W=/tmp/logs352; rm -rf $W; mkdir -p $W /tmp/b352
for f in gpu-bundle-diag/r352/*.xz gpu-bundle-diag/r351/sdpa.xz; do b=$(basename $f .xz); xz -dc $f > /tmp/b352/$b; chmod +x /tmp/b352/$b; done
S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader > $S
R="--ignored --nocapture --test-threads=1"
pack() { tar czf $OUT/logs.tgz -C $W . ; }
timeout 120 env SDPA_GATE_VARIANTS=split,split-n64,mma,decode /tmp/b352/gpu_gate $R > $W/gate.log 2>&1; echo "gate split,split-n64,mma,decode rc=$? $(grep -E 'passed, .* failed' $W/gate.log | tail -1)" >> $S
pack
timeout 100 /tmp/b352/sdpa bench --shapes 2,8,256,64,causal 1,8,512,64,causal 1,16,4096,128,causal --window=128,0 --softcap 30 --variants mma,split,wgmma --modes graph > $W/bench.log 2>&1
echo "== bench window 128,0 softcap 30 rc=$?" >> $S; grep -E "^(mma|split|wgmma)" $W/bench.log | awk '{print $1, $2, $5, $NF}' >> $S
pack
CS=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
timeout 120 "$CS" --tool memcheck --print-limit 5 /tmp/b352/window $R split_and_mma > $W/memcheck.log 2>&1; echo "memcheck split_and_mma windows rc=$? $(grep -E 'ERROR SUMMARY' $W/memcheck.log | tail -1)" >> $S
pack
TWINS=split_window,split_softcap,split_n64_window,split_n64_softcap,mma_window,mma_softcap
timeout 240 env SDPA_FUZZ_ENTRIES=$TWINS /tmp/b352/gpu_fuzz_release $R > $W/fuzz.log 2>&1; echo "release fuzz sm_90a twins (10000/entry) rc=$?" >> $S
grep -E "^sdpa_|total|FAIL" $W/fuzz.log | awk '{print $1, $2, $3, $4, $5}' | head -30 >> $S
pack
echo "elapsed ${SECONDS}s" >> $S
cat $S
