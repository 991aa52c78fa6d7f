#!/usr/bin/env bash
# run 98 (H100): session 10's kernels (ed5861e, as run 97): gate + overlap + GPU fuzz; the 8 issue shapes
# (graph, graph-overlap), the 1-key floor, 12 crossover shapes near the rule's edges (graph); torch peers.
# Predicted picks of kernels::recommended (64c8736) at the 12 crossover shapes, to be checked here: split at
# (1,8,1024,64), (1,8,1024,128); mma at (4,16,384,64), (8,16,256,128); wgmma at the other 8, among them
# (1,4,2048,64) (a miss on the H200 and in run 82) and (8,16,384,128) (a miss in run 82).
set -uo pipefail
export STEP_TIMEOUT=240
bash scripts/gpu-run.sh gate fuzz > /tmp/run.txt 2>&1
SHAPES="2,8,256,64 1,8,512,64 4,16,2048,64 2,16,8192,64 2,16,8192,64,causal 4,16,4096,128 1,16,16384,128 1,16,16384,128,causal"
REST="1,8,1024,64 1,4,2048,64 1,8,2048,64,causal 1,12,1024,64 1,8,1024,128 1,8,1536,128 1,8,2048,128,causal 4,16,384,64 8,16,512,64 8,16,256,128 8,16,384,128 4,16,1024,128"
B=gpu-bundle/bin/sdpa
timeout 300 $B bench --variants mma,wgmma,split --shapes $SHAPES --modes graph,graph-overlap --json $OUT/bench-mma.json > $OUT/bench.txt 2>&1
timeout 60 $B bench --variants mma,wgmma,split --shapes 1,1,1,64 --modes graph >> $OUT/bench.txt 2>&1
timeout 240 $B bench --variants mma,wgmma,split --shapes $REST --modes graph --json $OUT/crossover.json >> $OUT/bench.txt 2>&1
timeout 240 python3 scripts/peers.py $SHAPES > $OUT/peers.jsonl 2>> $OUT/device.txt
grep -E "passed|failed|FAIL" /tmp/run.txt | tail -6
grep -v '^\[' $OUT/bench.txt | grep -E " graph " | awk '{print $1, $2, $4, $7}'
python3 scripts/peers.py --summarize $OUT/peers.jsonl | grep -E "floor|cudnn"
