#!/usr/bin/env bash
# Run 108: record of the submitted build (stage 71's kernels; diagnostic
# patches refreshed): gate + overlap + GPU fuzz, compute-sanitizer x4 +
# adversarial + determinism + the GPU fuzz on the planted bug
# (gpu-bundle-bug/), the 8 issue shapes (graph, graph-overlap), the 1-key
# floor, the 37 crossover shapes of host/tests/kernels.rs (graph), torch
# peers. As run 104, plus the planted bug.
set -uo pipefail
export STEP_TIMEOUT=240
bash scripts/gpu-run.sh gate fuzz issue3 > /tmp/run.txt 2>&1
SHAPES="2,8,256,64 1,8,512,64 4,16,2048,64 2,16,8192,64 2,16,8192,64,causal 4,16,4096,128 1,16,16384,128 1,16,16384,128,causal"
REST="1,8,1024,64 1,8,1536,64 1,8,2048,64 4,16,1024,64 1,8,512,128 1,8,1024,128 1,8,2048,128 4,16,1024,128 1,8,1024,64,causal 1,8,2048,64,causal 2,16,1024,64 1,16,1024,64 1,12,1024,64 2,8,2048,64,causal 1,8,2048,128,causal 1,4,2048,64 1,8,1536,128 2,4,512,64 8,16,256,64 8,16,512,64 4,16,512,128 8,16,512,128 16,16,256,64 8,16,256,128 4,16,768,64 2,8,512,64 1,8,768,64 4,8,512,64 2,16,512,64 4,16,384,64 2,8,1024,128 1,4,1024,128 1,8,768,128 2,12,768,128 8,16,384,128 2,16,2048,128,causal 1,6,1536,128"
B=gpu-bundle/bin/sdpa
timeout 300 $B bench --variants mma,wgmma,split --shapes $SHAPES --modes graph,graph-overlap --json $OUT/bench-mma.json > $OUT/bench.txt 2>&1
timeout 60 $B bench --variants mma,wgmma,split --shapes 1,1,1,64 --modes graph >> $OUT/bench.txt 2>&1
timeout 240 $B bench --variants mma,wgmma,split --shapes $REST --modes graph --json $OUT/crossover.json >> $OUT/bench.txt 2>&1
timeout 240 python3 scripts/peers.py $SHAPES > $OUT/peers.jsonl 2>> $OUT/device.txt
cp /tmp/run.txt $OUT/run.txt
grep -E "passed|failed|FAIL|clean|hazard|ERROR|minimal failing|Test failed" /tmp/run.txt | tail -20
grep -v '^\[' $OUT/bench.txt | grep -E "graph" | awk '{print $1, $2, $3, $4, $7}' | head -30
python3 scripts/peers.py --summarize $OUT/peers.jsonl | grep -E "floor|cudnn"
