#!/usr/bin/env bash
# Run 117: the refitted recommendation out of sample (22 shapes, every
# variant, graph mode). Predictions: results/2026-11-25-predictions-run117.md.
set -uo pipefail
B=gpu-bundle/bin/sdpa
timeout 400 $B bench --variants mma,wgmma,split,split-wg --shapes 32,16,128,64 12,16,384,64 16,8,320,64 6,16,448,64 1,33,512,64 1,40,512,64 5,8,512,64 2,10,640,64 1,20,768,64 2,12,768,64 1,14,1024,64 1,20,1024,64 2,12,1024,64,causal 8,8,1024,64,causal 2,8,1536,64,causal 1,6,1280,64 2,10,512,128 1,20,512,128 4,12,256,128 10,16,256,128 2,8,384,64 3,6,768,64 --modes graph --samples 10 --json $OUT/oos.json > $OUT/bench.txt 2>&1
grep -cE " ok$" $OUT/bench.txt; grep -E "FAIL" $OUT/bench.txt | head
