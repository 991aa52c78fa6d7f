#!/usr/bin/env bash
# Run 124: every variant (but naive) of the split-n64 build on 25 D = 64
# shapes of runs 116/117/120/121 with at most 264 split blocks and 20 new
# ones (graph mode, 10 samples): the data split-n64's cost model is fitted on.
set -uo pipefail
B=gpu-bundle/bin/sdpa
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $OUT/gpu.txt
FIT="1,12,512,64 1,16,512,64 1,3,2048,64 1,4,1024,64 1,4,1536,64 1,4,2048,64 1,6,1024,64 1,6,1280,64 1,8,1024,64 1,8,1024,64,causal 1,8,2048,64,causal 1,8,512,64 1,8,768,64 2,12,256,64 2,16,256,64 2,2,2048,64 2,4,1024,64 2,4,512,64 2,8,1024,64,causal 2,8,256,64 2,8,384,64 2,8,512,64 3,8,256,64 4,8,256,64 8,8,128,64 "
EXTRA="1,1,1,64 1,8,384,64 1,4,512,64 2,4,256,64 1,8,256,64 1,2,2048,64 1,16,256,64 1,8,640,64 1,4,768,64 2,2,1024,64 1,12,384,64 4,4,256,64 1,8,512,64,causal 1,16,512,64,causal 1,6,768,64 2,6,512,64 1,10,512,64 3,4,512,64 1,8,128,64 1,2,1024,64"
timeout 590 $B bench --variants mma,wgmma,split,split-wg,split-n64 --shapes $FIT $EXTRA --modes graph --samples 10 --json $OUT/fit.json > $OUT/bench.txt 2>&1
echo "rc=$?"; grep -cE " ok$" $OUT/bench.txt; grep -E "FAIL|error" $OUT/bench.txt | head
