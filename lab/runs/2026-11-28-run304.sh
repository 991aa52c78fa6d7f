#!/usr/bin/env bash
# Run 304 (issues 42, 41): decode's correctness after the merge rewrite,
# the V clearing, DecodeExtras and paged caches (gate on both images,
# device_api, memcheck); then alone: paged against contiguous timing, the
# decode shapes against torch and the copy, the split family's mission
# shapes old (cd9e090) against new, the quantizer. Predictions:
# lab/predictions/2026-11-28-predictions-run304.md.
set -uo pipefail
B=gpu-bundle/bin
D=gpu-bundle-diag/r304
mkdir -p gpu-bundle && tar xJf $D/gb.tar.xz -C gpu-bundle
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader | tee "$OUT/gpu.txt"
W=$OUT/logs; mkdir -p $W
R="--ignored --nocapture --test-threads=1"
T=240
run() { local name=$1; shift; ( timeout $T "$@" >"$W/$name.log" 2>&1; echo "rc=$?" >>"$W/$name.log" ) & }
CS=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
run gate env SDPA_GATE_VARIANTS=decode $B/gpu_gate $R
run gate89 env SDPA_IMAGE=sm_89 SDPA_GATE_VARIANTS=decode $B/gpu_gate $R
run memcheck "$CS" --tool memcheck --error-exitcode 9 $B/sanitize_target $R
wait
run api $B/device_api $R; wait
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/nvidia_cudnn_frontend-*.whl 2>/dev/null
export PYTHONPATH=/tmp/site
S="64,32:8,1:8192,128 8,32:8,1:32768,128 1,32:8,1:4096,128 64,32:8,16:8192,128"
timeout 150 $B/sdpa bench --shapes $S --variants decode --modes graph,graph-overlap --json $W/decode.json > $W/decode.log 2>&1
timeout 120 python3 scripts/peers.py 1,32:8,1:4096,128 64,32:8,1:8192,128 > $W/peers.jsonl 2> $W/peers.err
M="2,8,256,64 1,8,512,64"
for round in 1 2; do
  timeout 60 $D/sdpa-old bench --shapes $M --variants split,split-wg,split-n64 --modes graph > $W/mission-old-$round.log 2>&1
  timeout 60 $B/sdpa bench --shapes $M --variants split,split-wg,split-n64 --modes graph > $W/mission-new-$round.log 2>&1
done
mkdir -p /tmp/q; B=$B OUT=/tmp/q timeout 200 bash lab/runs/quantizer-speed.sh > /dev/null 2>&1; cp /tmp/q/quantizer-speed.log $W/
{
for f in gate gate89 memcheck api; do
  echo "$f: $(grep -E 'passed, .* failed|test result|ERROR SUMMARY' "$W/$f.log" | tail -2 | tr '\n' ' ') $(tail -1 "$W/$f.log")"
done
grep -hE "FAIL|panicked" $W/gate.log $W/gate89.log $W/api.log | head -8
grep -E "paged|decode causal" $W/api.log
grep -E "copy:|decode " $W/decode.log
python3 scripts/peers.py --summarize $W/peers.jsonl 2>&1 | head -14
for round in 1 2; do for b in old new; do echo "$b-$round $(grep -E '^split' $W/mission-$b-$round.log | awk '{printf "%s %s %s; ", $1, $2, $4}')"; done; done
grep -E "^bits|^time|^\|" $W/quantizer-speed.log | head -20
grep -iE "ncu|dram|duration|occupancy|issue|stall|smsp__pcsamp" $W/quantizer-speed.log | head -24
echo "elapsed ${SECONDS}s"
} | tee $OUT/summary.txt
