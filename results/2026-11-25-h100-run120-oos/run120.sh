#!/usr/bin/env bash
# Run 120: the recommendation refitted on runs 116-117, out of sample (20
# shapes, every variant, graph mode). Predictions:
# results/2026-11-25-predictions-run120.md.
set -uo pipefail
B=gpu-bundle/bin/sdpa
timeout 400 $B bench --variants mma,wgmma,split,split-wg --shapes 1,60,512,64 1,72,512,64 2,20,640,64 3,12,768,64 1,18,896,64 2,8,1024,64 4,16,448,64 10,16,400,64 24,16,320,64 64,16,128,64 16,16,256,128 12,16,320,128 6,16,384,128 5,16,512,128 3,16,512,128 4,12,1024,64,causal 2,16,2048,64,causal 2,10,768,64 1,24,1024,64 8,12,256,128 --modes graph --samples 10 --json $OUT/oos.json > $OUT/bench.txt 2>&1
grep -cE " ok$" $OUT/bench.txt; grep -E "FAIL" $OUT/bench.txt | head
