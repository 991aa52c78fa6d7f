#!/usr/bin/env bash
# Run 121: the cost-model recommendation out of sample (24 shapes, every
# variant, graph mode). Predictions: results/2026-11-25-predictions-run121.md.
set -uo pipefail
B=gpu-bundle/bin/sdpa
timeout 500 $B bench --variants mma,wgmma,split,split-wg --shapes 3,8,384,64 6,12,256,64 1,32,768,64 2,24,512,64 1,48,640,64 2,6,1536,64 1,3,2048,64 20,16,192,64 48,16,128,64 2,32,1024,64,causal 1,16,1536,64,causal 3,10,1024,128 1,12,1024,128 4,24,256,128 2,20,384,128 1,10,2048,128,causal 6,8,768,128 1,28,512,128 24,16,128,128 2,12,640,128 1,6,2048,128 3,8,1024,64,causal 5,12,320,64 1,2,1536,128 --modes graph --samples 10 --json $OUT/oos.json > $OUT/bench.txt 2>&1
grep -cE " ok$" $OUT/bench.txt; grep -E "FAIL" $OUT/bench.txt | head
