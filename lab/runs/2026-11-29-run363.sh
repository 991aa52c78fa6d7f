#!/usr/bin/env bash
# Run 363 (issues 39, 41): the record table with the FP8 peers on stage
# 189's build; the sm_89 image's release fuzz of its plain bf16 entries
# (run 357 cut them); memcheck on the 192-key kernel.
# Predictions: lab/predictions/2026-11-29-predictions-run363.md.
#   carry: gpu-bundle-diag/r363 (sdpa, gpu_fuzz_release of run 362's build, the cuDNN frontend wheel)
set -uo pipefail
W=/tmp/logs363; rm -rf $W; mkdir -p $W /tmp/b363
for f in gpu-bundle-diag/r363/*.xz; do b=$(basename $f .xz); xz -dc $f > /tmp/b363/$b; chmod +x /tmp/b363/$b; done
S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader > $S
R="--ignored --nocapture --test-threads=1"
pack() { tar czf $OUT/logs.tgz -C $W . ; }
SHAPES="2,8,256,64 1,8,512,64 4,16,2048,64 2,16,8192,64 2,16,8192,64,causal 4,16,4096,128 1,16,16384,128 1,16,16384,128,causal"
timeout 100 /tmp/b363/sdpa bench --shapes $SHAPES --variants split-n64,wgmma,wgmma-fp8pv --modes graph > $W/bench.log 2>&1
echo "== ours rc=$?" >> $S; grep -E "^(split|wgmma)" $W/bench.log | awk '{print $1, $2, $5, $8, $NF}' >> $S
pack
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site gpu-bundle-diag/r363/nvidia_cudnn_frontend-*.whl > $W/pip.log 2>&1
(PYTHONPATH=/tmp/site timeout 170 python3 scripts/peers.py $SHAPES > $W/peers.jsonl 2> $W/peers.err; echo "== peers rc=$?" >> $S)
PYTHONPATH=/tmp/site python3 scripts/peers.py --summarize $W/peers.jsonl | grep -E "cudnn-fp8|torch-cudnn-bf16|copy|floor" >> $S 2>&1
pack
CS=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
timeout 40 "$CS" --tool memcheck --print-limit 5 /tmp/b363/sdpa bench --shapes 2,16,2200,128 --variants wgmma-fp8pv --modes direct --samples 1 --launches 1 > $W/memcheck.log 2>&1
echo "memcheck 2,16,2200,128 rc=$? $(grep -E 'ERROR SUMMARY' $W/memcheck.log | tail -1)" >> $S
pack
timeout 110 env SDPA_IMAGE=sm_89 SDPA_FUZZ_ENTRIES=_split_d64_bf16,_split_d128_bf16,_mma_d64_bf16,_mma_d128_bf16 /tmp/b363/gpu_fuzz_release $R > $W/fuzz89.log 2>&1; echo "release fuzz sm_89 plain bf16 (10000/entry) rc=$?" >> $S
grep -E "^sdpa_|total|FAIL" $W/fuzz89.log | awk '{print $1, $2, $3, $4, $5}' | head -8 >> $S
pack
echo "elapsed ${SECONDS}s" >> $S
cat $S
