#!/usr/bin/env bash
# Run 303 (issues 42, 41): decode's sm_90a gate cases (run 302 timed out in
# them); the small decode with 128-key splits, in graph and graph-overlap
# modes, and the big decode shapes; the split family at the mission shapes,
# old build (cd9e090, sdpa-old) against new, alternated; the quantizer's
# schedules (lab/runs/quantizer-speed.sh). Predictions:
# lab/predictions/2026-11-28-predictions-run303.md.
set -uo pipefail
B=gpu-bundle/bin
D=gpu-bundle-diag/r303
mkdir -p gpu-bundle && tar xJf $D/gb.tar.xz -C gpu-bundle
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader | tee "$OUT/gpu.txt"
W=$OUT/logs; mkdir -p $W
R="--ignored --nocapture --test-threads=1"
timeout 200 env SDPA_GATE_VARIANTS=decode $B/gpu_gate $R > $W/gate.log 2>&1; echo "rc=$?" >> $W/gate.log
S="64,32:8,1:8192,128 8,32:8,1:32768,128 1,32:8,1:4096,128 64,32:8,16:8192,128"
timeout 150 $B/sdpa bench --shapes $S --variants decode --modes graph,graph-overlap --json $W/decode.json > $W/decode.log 2>&1
M="2,8,256,64 1,8,512,64"
for round in 1 2; do
  timeout 60 $D/sdpa-old bench --shapes $M --variants split,split-wg,split-n64 --modes graph > $W/mission-old-$round.log 2>&1
  timeout 60 $B/sdpa bench --shapes $M --variants split,split-wg,split-n64 --modes graph > $W/mission-new-$round.log 2>&1
done
B=$B OUT=$OUT timeout 200 bash lab/runs/quantizer-speed.sh > $W/quantizer.log 2>&1
echo "gate: $(grep -E 'passed, .* failed' $W/gate.log) $(tail -1 $W/gate.log)"
grep FAIL $W/gate.log | head -5
grep -E "copy|decode " $W/decode.log
for round in 1 2; do for b in old new; do echo "$b-$round"; grep -E "^split" $W/mission-$b-$round.log | awk '{print $1, $2, $4}'; done; done
grep -vE "^\s*$" $W/quantizer.log | head -60
echo "elapsed ${SECONDS}s"
