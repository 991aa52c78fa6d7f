#!/usr/bin/env bash
# Run 306 (issue 42): the block-per-row merge (four warps share a row's
# splits): decode's gate cases, device_api, and the decode shapes with the
# small decode's torch peers in the same run. Predictions:
# lab/predictions/2026-11-28-predictions-run306.md.
set -uo pipefail
B=gpu-bundle/bin
D=gpu-bundle-diag/r306
mkdir -p gpu-bundle && tar xJf $D/gb.tar.xz -C gpu-bundle
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader | tee "$OUT/gpu.txt"
W=$OUT/logs; mkdir -p $W
R="--ignored --nocapture --test-threads=1"
timeout 120 env SDPA_GATE_VARIANTS=decode $B/gpu_gate $R > $W/gate.log 2>&1; echo "rc=$?" >> $W/gate.log
timeout 100 $B/device_api $R > $W/api.log 2>&1; echo "rc=$?" >> $W/api.log
S="64,32:8,1:8192,128 8,32:8,1:32768,128 1,32:8,1:4096,128"
timeout 100 $B/sdpa bench --shapes $S --variants decode --modes graph,graph-overlap > $W/decode.log 2>&1
timeout 60 python3 scripts/peers.py 1,32:8,1:4096,128 > $W/peers.jsonl 2> /dev/null
{
for f in gate api; do
  echo "$f: $(grep -E 'passed, .* failed|test result' "$W/$f.log" | tail -2 | tr '\n' ' ') $(tail -1 "$W/$f.log")"
done
grep -hE "FAIL|panicked" $W/gate.log $W/api.log | head -6
grep -E "paged|decode causal" $W/api.log
grep -E "copy:|decode " $W/decode.log
python3 scripts/peers.py --summarize $W/peers.jsonl 2>&1 | grep -E "torch|copy" | head -6
echo "elapsed ${SECONDS}s"
} | tee $OUT/summary.txt
