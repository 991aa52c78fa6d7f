#!/usr/bin/env bash
# Run 116: every variant of the stage-80 build on the 55 crossover shapes of
# run 110 and the 29 out-of-sample shapes of run 111 (graph mode), the data
# the recommendation is refitted on now that split-wg D = 64 fits two blocks
# per SM. Prediction: split-wg D = 64 fastest (or within 2%) at most D = 64
# shapes of 96+ split-wg blocks up to 1024 keys; wgmma still fastest at 2048+
# keys with 96+ wgmma blocks; D = 128 as in runs 110-111 (unchanged kernel).
set -uo pipefail
B=gpu-bundle/bin/sdpa
REST="1,8,1024,64 1,8,1536,64 1,8,2048,64 4,16,1024,64 1,8,512,128 1,8,1024,128 1,8,2048,128 4,16,1024,128 1,8,1024,64,causal 1,8,2048,64,causal 2,16,1024,64 1,16,1024,64 1,12,1024,64 2,8,2048,64,causal 1,8,2048,128,causal 1,4,2048,64 1,8,1536,128 2,4,512,64 8,16,256,64 8,16,512,64 4,16,512,128 8,16,512,128 16,16,256,64 8,16,256,128 4,16,768,64 2,8,512,64 1,8,768,64 4,8,512,64 2,16,512,64 4,16,384,64 2,8,1024,128 1,4,1024,128 1,8,768,128 2,12,768,128 8,16,384,128 2,16,2048,128,causal 1,6,1536,128"
EDGE="8,8,128,64 4,8,256,64 3,8,256,64 1,6,1024,64 2,2,2048,64 1,4,1024,64 4,8,256,128 2,8,512,128 4,8,512,128 2,8,256,128"
OOS="1,12,768,64 2,6,1024,64 3,8,512,64 1,16,512,64 2,12,512,64 6,8,256,64 2,16,256,64 1,24,512,64 5,8,256,64 1,10,1024,64 1,4,1536,64 1,12,768,128 3,8,512,128 2,6,768,128 1,12,512,128 5,8,256,128 1,8,1280,128 6,16,256,128 3,16,384,128 2,4,1024,128 2,8,1024,64,causal 1,8,1536,128,causal 4,8,1024,64,causal 1,16,1024,128,causal 1,12,512,64 2,12,256,64 3,4,1024,64 12,8,256,64 2,4,1024,64"
M="2,8,256,64 1,8,512,64 4,16,2048,64"
timeout 560 $B bench --variants mma,wgmma,split,split-wg --shapes $M $REST $EDGE $OOS --modes graph --samples 10 --json $OUT/crossover.json > $OUT/bench.txt 2>&1
grep -cE " ok$" $OUT/bench.txt; grep -E "FAIL" $OUT/bench.txt | head
