#!/usr/bin/env bash
# Run 115 (stage 80 record): the build with split-wg D = 64 at two blocks
# per SM: gate + overlap + GPU fuzz, compute-sanitizer x4 + adversarial +
# determinism + the planted bug (gpu-bundle-bug, first time on a build with
# split-wg), the 8 issue shapes (graph, graph-overlap), the 1-key floor, the
# torch peers. The crossover shapes follow in run 116.
# Prediction: every check passes and the planted bug fails and shrinks;
# split 3.85 +- 0.05 / 5.78 +- 0.08 us at the mission shapes, split-wg
# 4.2 / 6.5 there (run 114); the other kernels (unchanged PTX) within +-2%
# of record -9; the speed gate against -9 passes.
set -uo pipefail
export STEP_TIMEOUT=240
bash scripts/gpu-run.sh gate fuzz issue3 > /tmp/run.txt 2>&1
SHAPES="2,8,256,64 1,8,512,64 4,16,2048,64 2,16,8192,64 2,16,8192,64,causal 4,16,4096,128 1,16,16384,128 1,16,16384,128,causal"
B=gpu-bundle/bin/sdpa
V=mma,wgmma,split,split-wg
timeout 300 $B bench --variants $V --shapes $SHAPES --modes graph,graph-overlap --json $OUT/bench-mma.json > $OUT/bench.txt 2>&1
timeout 60 $B bench --variants $V --shapes 1,1,1,64 1,1,1,128 --modes graph >> $OUT/bench.txt 2>&1
timeout 240 python3 scripts/peers.py $SHAPES > $OUT/peers.jsonl 2>> $OUT/device.txt
cp /tmp/run.txt $OUT/run.txt
grep -E "passed|failed|FAIL|clean|hazard|ERROR|minimal failing" /tmp/run.txt | tail -16
grep -E "FAIL" $OUT/bench.txt | head
python3 scripts/peers.py --summarize $OUT/peers.jsonl | grep -E "floor|cudnn" | head -4
grep -E "^(split|wgmma) " $OUT/bench.txt | grep " graph " | cut -c1-75
