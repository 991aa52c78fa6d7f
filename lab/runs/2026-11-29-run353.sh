#!/usr/bin/env bash
# Run 353: run 352's remainder (gate split-n64 and decode, six twin entries
# at 10,000 cases), and on the sm_89 image the gate (split, mma, decode) and
# the release fuzz of the score twins at 10,000 cases each.
# Predictions: lab/predictions/2026-11-29-predictions-run353.md.
#   carry: gpu-bundle-diag/r352 (gpu_gate, gpu_fuzz_release)
set -uo pipefail
W=/tmp/logs353; rm -rf $W; mkdir -p $W /tmp/b353
for f in gpu-bundle-diag/r352/*.xz; do b=$(basename $f .xz); xz -dc $f > /tmp/b353/$b; chmod +x /tmp/b353/$b; done
S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader > $S
R="--ignored --nocapture --test-threads=1"
pack() { tar czf $OUT/logs.tgz -C $W . ; }
gate() { grep -oE "^\[[a-z0-9-]+ " $1 | sort | uniq -c | tr '\n' ' '; echo "FAIL lines: $(grep -c FAIL $1)"; }
timeout 90 env SDPA_GATE_VARIANTS=split-n64,decode /tmp/b353/gpu_gate $R > $W/gate.log 2>&1; echo "gate split-n64,decode rc=$? $(grep -E 'passed, .* failed' $W/gate.log | tail -1)" >> $S
gate $W/gate.log >> $S
pack
LEFT=sdpa_split_window_d128_bf16,sdpa_split_softcap_d128_bf16,sdpa_split_n64_window_d64_bf16,sdpa_split_n64_softcap_d64_bf16,sdpa_split_n64_window_d128_bf16,sdpa_split_n64_softcap_d128_bf16
timeout 80 env SDPA_FUZZ_ENTRIES=$LEFT /tmp/b353/gpu_fuzz_release $R > $W/fuzz.log 2>&1; echo "release fuzz sm_90a, 6 twins (10000/entry) rc=$?" >> $S
grep -E "^sdpa_|total|FAIL" $W/fuzz.log | awk '{print $1, $2, $3, $4, $5}' >> $S
pack
timeout 150 env SDPA_IMAGE=sm_89 SDPA_GATE_VARIANTS=split,mma,decode /tmp/b353/gpu_gate $R > $W/gate89.log 2>&1; echo "gate sm_89 image split,mma,decode rc=$? $(grep -E 'passed, .* failed' $W/gate89.log | tail -1)" >> $S
gate $W/gate89.log >> $S
pack
TWINS=_split_window,_split_softcap,_mma_window,_mma_softcap,_decode_window,_decode_softcap
timeout 200 env SDPA_IMAGE=sm_89 SDPA_FUZZ_ENTRIES=$TWINS /tmp/b353/gpu_fuzz_release $R > $W/fuzz89.log 2>&1; echo "release fuzz sm_89 image twins (10000/entry) rc=$?" >> $S
grep -E "^sdpa_|total|FAIL" $W/fuzz89.log | awk '{print $1, $2, $3, $4, $5}' | head -30 >> $S
pack
echo "elapsed ${SECONDS}s" >> $S
cat $S
