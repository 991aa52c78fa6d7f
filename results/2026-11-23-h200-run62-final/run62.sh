#!/usr/bin/env bash
# run 62: final run of session 7 on main: gate + fuzz, full bench (graph, graph-overlap) + the 1-key floor, torch peers.
set -uo pipefail
export STEP_TIMEOUT=240
bash scripts/gpu-run.sh gate fuzz > $OUT/run.txt 2>&1
SHAPES="2,8,256,64 1,8,512,64 4,16,2048,64 2,16,8192,64 2,16,8192,64,causal 4,16,4096,128 1,16,16384,128 1,16,16384,128,causal"
B=gpu-bundle/bin/sdpa
timeout 300 $B bench --variants mma,wgmma,split --shapes $SHAPES --modes graph,graph-overlap --json $OUT/bench-mma.json > $OUT/bench.txt 2>&1
timeout 60 $B bench --variants mma,wgmma,split --shapes 1,1,1,64 --modes graph >> $OUT/bench.txt 2>&1
timeout 240 python3 scripts/peers.py $SHAPES > $OUT/peers.jsonl 2>> $OUT/device.txt
grep -v '^\[' $OUT/bench.txt | tail -60
python3 scripts/peers.py --summarize $OUT/peers.jsonl
grep -E "passed|failed|FAIL" $OUT/run.txt | tail -6
