#!/usr/bin/env bash
# Run 126: every variant (but naive) at 26 D = 128 shapes of runs 116-121
# with at most 400 split blocks and 12 new ones (graph, 10 samples): the data
# split-n64's D = 128 coefficients are fitted on (run 125 found it 15-17%
# faster than split at (1,6,512,128) and (1,8,384,128)).
set -uo pipefail
B=gpu-bundle/bin/sdpa
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $OUT/gpu.txt
timeout 300 $B bench --variants mma,wgmma,split,split-wg,split-n64 --shapes 1,10,2048,128,causal 1,12,1024,128 1,12,512,128 1,12,768,128 1,16,1024,128,causal 1,2,1536,128 1,20,512,128 1,4,1024,128 1,6,1536,128 1,6,2048,128 1,8,1024,128 1,8,1280,128 1,8,1536,128 1,8,1536,128,causal 1,8,2048,128,causal 1,8,512,128 1,8,768,128 2,10,512,128 2,4,1024,128 2,6,768,128 2,8,256,128 2,8,512,128 3,8,512,128 4,12,256,128 4,8,256,128 5,8,256,128  1,8,384,128 1,4,512,128 1,2,1024,128 1,4,768,128 1,16,256,128 1,2,2048,128 1,8,256,128 2,4,512,128 1,6,1024,128 1,4,2048,128,causal 1,16,512,128 1,1,1024,128 --modes graph --samples 10 --json $OUT/fit.json > $OUT/bench.txt 2>&1
echo "rc=$?"; grep -cE " ok$" $OUT/bench.txt; grep -E "FAIL|error" $OUT/bench.txt | head
