#!/usr/bin/env bash
# Run 302 (issue 42): the `decode` walk's correctness (gate on both images,
# fuzz, memcheck) and its speed against split-n64, torch and the device
# copy on the serving issue's decode shapes; the split family's mission
# shapes after its PTX moved. Predictions:
# lab/predictions/2026-11-28-predictions-run302.md.
set -uo pipefail
B=gpu-bundle/bin
D=gpu-bundle-diag/r302
mkdir -p gpu-bundle && tar xJf $D/gb.tar.xz -C gpu-bundle
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader | tee "$OUT/gpu.txt"
W=$OUT/logs; mkdir -p $W
R="--ignored --nocapture --test-threads=1"
T=280
run() { local name=$1; shift; ( timeout $T "$@" >"$W/$name.log" 2>&1; echo "rc=$?" >>"$W/$name.log" ) & }
CS=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
run gate $B/gpu_gate $R
run gate89 env SDPA_IMAGE=sm_89 $B/gpu_gate $R
run fuzz $B/gpu_fuzz $R
run memcheck "$CS" --tool memcheck --error-exitcode 9 $B/sanitize_target $R
wait
# Alone on the GPU from here.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/nvidia_cudnn_frontend-*.whl 2>/dev/null
export PYTHONPATH=/tmp/site
S="64,32:8,1:8192,128 8,32:8,1:32768,128 1,32:8,1:4096,128 64,32:8,16:8192,128"
timeout 200 $B/sdpa bench --shapes $S --variants decode,split-n64 --modes graph --json $W/decode.json > $W/decode.log 2>&1
timeout 150 python3 scripts/peers.py $S > $W/peers.jsonl 2> $W/peers.err
timeout 100 $B/sdpa bench --shapes 2,8,256,64 1,8,512,64 --variants split,split-wg,split-n64 --modes graph > $W/mission.log 2>&1
for f in gate gate89 fuzz memcheck; do
  echo "$f: $(grep -E 'passed, .* failed|test result|ERROR SUMMARY' "$W/$f.log" | tail -2 | tr '\n' ' ') $(tail -1 "$W/$f.log")"
done
grep -E "FAIL" $W/gate.log | head -5
grep -E "decode" $W/gate.log | grep -c PASS
cat $W/decode.log | grep -vE "^\s*$" | tail -14
python3 scripts/peers.py --summarize $W/peers.jsonl 2>&1 | head -30
grep -E "split" $W/mission.log | head -8
echo "elapsed ${SECONDS}s"
