#!/usr/bin/env bash
# Run 357 (issues 41, 39): the release fuzz of the plain split-family and
# mma entries since the log-sum-exp change, on both images; split's gate;
# memcheck of every prefill variant with the log-sum-exp; ours and cuDNN
# FP8 at D = 128 over four key lengths at constant B x S.
# Predictions: lab/predictions/2026-11-29-predictions-run357.md.
#   carry: gpu-bundle-diag/r357 (sdpa, window, gpu_gate, gpu_fuzz_release, the cuDNN frontend wheel)
set -uo pipefail
W=/tmp/logs357; rm -rf $W; mkdir -p $W /tmp/b357
for f in gpu-bundle-diag/r357/*.xz; do b=$(basename $f .xz); xz -dc $f > /tmp/b357/$b; chmod +x /tmp/b357/$b; done
S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader > $S
R="--ignored --nocapture --test-threads=1"
pack() { tar czf $OUT/logs.tgz -C $W . ; }
PLAIN=_split_d,_split_wg_d,_split_n64_d,_mma_d
timeout 170 env SDPA_FUZZ_ENTRIES=$PLAIN /tmp/b357/gpu_fuzz_release $R > $W/fuzz.log 2>&1; echo "release fuzz sm_90a plain (10000/entry) rc=$?" >> $S
grep -E "^sdpa_|total|FAIL" $W/fuzz.log | awk '{print $1, $2, $3, $4, $5}' | head -20 >> $S
pack
timeout 100 env SDPA_GATE_VARIANTS=split /tmp/b357/gpu_gate $R > $W/gate.log 2>&1; echo "gate split rc=$? $(grep -E 'passed, .* failed' $W/gate.log | tail -1)" >> $S
echo "$(grep -oE '^\[[a-z0-9-]+ ' $W/gate.log | sort | uniq -c | tr '\n' ' ') FAIL lines: $(grep -c FAIL $W/gate.log)" >> $S
pack
CS=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
timeout 90 "$CS" --tool memcheck --print-limit 5 /tmp/b357/window $R every_prefill > $W/memcheck.log 2>&1; echo "memcheck every_prefill (lse) rc=$? $(grep -E 'ERROR SUMMARY' $W/memcheck.log | tail -1)" >> $S
pack
PLAIN89=_split_d,_mma_d
timeout 90 env SDPA_IMAGE=sm_89 SDPA_FUZZ_ENTRIES=$PLAIN89 /tmp/b357/gpu_fuzz_release $R > $W/fuzz89.log 2>&1; echo "release fuzz sm_89 plain (10000/entry) rc=$?" >> $S
grep -E "^sdpa_|total|FAIL" $W/fuzz89.log | awk '{print $1, $2, $3, $4, $5}' | head -12 >> $S
pack
SHAPES="8,16,2048,128 4,16,4096,128 2,16,8192,128 1,16,16384,128"
timeout 60 /tmp/b357/sdpa bench --shapes $SHAPES --variants wgmma,wgmma-fp8pv --modes graph > $W/bench.log 2>&1
echo "== ours rc=$?" >> $S; grep -E "^wgmma" $W/bench.log | awk '{print $1, $2, $5, $8}' >> $S
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site gpu-bundle-diag/r357/nvidia_cudnn_frontend-*.whl > $W/pip.log 2>&1
(PYTHONPATH=/tmp/site timeout 150 python3 scripts/peers.py $SHAPES > $W/peers.jsonl 2> $W/peers.err; echo "== peers rc=$?" >> $S)
PYTHONPATH=/tmp/site python3 scripts/peers.py --summarize $W/peers.jsonl | grep -E "cudnn-fp8|copy|floor" >> $S 2>&1
pack
echo "elapsed ${SECONDS}s" >> $S
cat $S
