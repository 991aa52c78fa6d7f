#!/usr/bin/env bash
# Run 125b (stage 83 record, timings): the 8 issue shapes (graph,
# graph-overlap), the 1-key floor, the torch peers; then the 25 shapes of
# results/2026-11-25-predictions-run125.md (every variant, graph).
set -uo pipefail
SHAPES="2,8,256,64 1,8,512,64 4,16,2048,64 2,16,8192,64 2,16,8192,64,causal 4,16,4096,128 1,16,16384,128 1,16,16384,128,causal"
B=gpu-bundle/bin/sdpa
V=mma,wgmma,split,split-wg,split-n64
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.draw,temperature.gpu --format=csv; $B info; } > $OUT/device.txt 2>&1
timeout 300 $B bench --variants $V --shapes $SHAPES --modes graph,graph-overlap --json $OUT/bench-mma.json > $OUT/bench.txt 2>&1
timeout 60 $B bench --variants $V --shapes 1,1,1,64 1,1,1,128 --modes graph >> $OUT/bench.txt 2>&1
timeout 60 $B bench --variants naive --shapes 2,8,256,64 1,8,512,64 4,16,2048,64 --json $OUT/bench-naive.json >> $OUT/bench.txt 2>&1
timeout 240 python3 scripts/peers.py $SHAPES > $OUT/peers.jsonl 2>> $OUT/device.txt
timeout 120 $B bench --variants $V --shapes 1,6,512,64 1,2,1536,64 1,3,1024,64 2,3,768,64 1,5,1024,64 1,8,896,64 3,2,1024,64 1,12,256,64 1,4,640,64 1,1,2048,64 2,2,768,64 1,16,384,64 1,6,2048,64,causal 1,4,1536,64,causal 2,4,768,64,causal 1,12,640,64 4,2,512,64 1,7,512,64 1,24,256,64 2,6,256,64 1,6,512,128 1,5,1024,128 2,6,512,128 1,8,384,128 1,3,1536,128 --modes graph --samples 10 --json $OUT/oos.json > $OUT/oos.txt 2>&1
grep -E "FAIL" $OUT/bench.txt $OUT/oos.txt | head
python3 scripts/peers.py --summarize $OUT/peers.jsonl | grep -E "floor|cudnn" | head -4
grep -E "^(split|split-n64|wgmma) " $OUT/bench.txt | grep " graph " | cut -c1-75
# The planted bug at split-n64's entries (run 125a's log cut the list at 20 lines).
timeout 200 gpu-bundle-bug/gpu_fuzz --ignored --nocapture --test-threads=1 > $OUT/bug.txt 2>&1
grep -E "Test failed" $OUT/bug.txt | cut -c1-60; grep -cE "Test failed" $OUT/bug.txt
