#!/usr/bin/env bash
# Run 348: mma's window and softcap twins (bb6dfae) on both images, and
# issue 39's record table with the FP8 peers in one call.
# Predictions: lab/predictions/2026-11-29-predictions-run348.md.
#   carry: gpu-bundle-diag/r348 (sdpa, window, gpu_fuzz_release, the cuDNN frontend wheel)
set -uo pipefail
W=/tmp/logs348; rm -rf $W; mkdir -p $W /tmp/b348
for f in gpu-bundle-diag/r348/*.xz; do b=$(basename $f .xz); xz -dc $f > /tmp/b348/$b; chmod +x /tmp/b348/$b; done
S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader > $S
R="--ignored --nocapture --test-threads=1"
pack() { tar czf $OUT/logs.tgz -C $W . ; }
timeout 150 /tmp/b348/window $R > $W/window.log 2>&1; echo "window (sm_90a) rc=$? $(grep -E 'test result' $W/window.log | tail -1)" >> $S
grep -E "^(mma|split)|panicked" $W/window.log | head -8 >> $S
timeout 90 env SDPA_IMAGE=sm_89 /tmp/b348/window $R split_and_mma decode_windows > $W/window89.log 2>&1; echo "window mma+split+decode (sm_89 image) rc=$? $(grep -E 'test result' $W/window89.log | tail -1)" >> $S
timeout 150 env SDPA_IMAGE=sm_89 SDPA_FUZZ_CASES=2000 /tmp/b348/gpu_fuzz_release $R > $W/fuzz89.log 2>&1; echo "release fuzz sm_89 (2000/entry) rc=$?" >> $S
grep -E "mma_(window|softcap)|total|FAIL" $W/fuzz89.log | tail -10 >> $S
pack
SHAPES="2,8,256,64 1,8,512,64 4,16,2048,64 2,16,8192,64 2,16,8192,64,causal 4,16,4096,128 1,16,16384,128 1,16,16384,128,causal"
timeout 150 /tmp/b348/sdpa bench --shapes $SHAPES --variants split-n64,wgmma,wgmma-fp8pv --modes graph > $W/bench.log 2>&1
echo "== ours rc=$?" >> $S; grep -E "^(split|wgmma)" $W/bench.log | awk '{print $1, $2, $5, $8}' >> $S
pack
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site gpu-bundle-diag/r348/nvidia_cudnn_frontend-*.whl > $W/pip.log 2>&1
(PYTHONPATH=/tmp/site timeout 200 python3 scripts/peers.py $SHAPES > $W/peers.jsonl 2> $W/peers.err; echo "== peers rc=$?" >> $S)
PYTHONPATH=/tmp/site python3 scripts/peers.py --summarize $W/peers.jsonl >> $S 2>&1
pack
echo "elapsed ${SECONDS}s" >> $S
cat $S
