#!/usr/bin/env bash
# Run 133: run 124's 45 D = 64 shapes, every variant but naive, on the
# stage-85 build (gpu-bundle/bin/sdpa, commit 0aaae00): split-n64's D = 64
# refit after stage 85 moved it 5-8% at short shapes.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $OUT/gpu.txt
timeout 300 gpu-bundle/bin/sdpa bench --variants mma,wgmma,split,split-wg,split-n64 --shapes 1,12,512,64 1,16,512,64 1,3,2048,64 1,4,1024,64 1,4,1536,64 1,4,2048,64 1,6,1024,64 1,6,1280,64 1,8,1024,64 1,8,1024,64,causal 1,8,2048,64,causal 1,8,512,64 1,8,768,64 2,12,256,64 2,16,256,64 2,2,2048,64 2,4,1024,64 2,4,512,64 2,8,1024,64,causal 2,8,256,64 2,8,384,64 2,8,512,64 3,8,256,64 4,8,256,64 8,8,128,64 1,1,1,64 1,8,384,64 1,4,512,64 2,4,256,64 1,8,256,64 1,2,2048,64 1,16,256,64 1,8,640,64 1,4,768,64 2,2,1024,64 1,12,384,64 4,4,256,64 1,8,512,64,causal 1,16,512,64,causal 1,6,768,64 2,6,512,64 1,10,512,64 3,4,512,64 1,8,128,64 1,2,1024,64 --modes graph --samples 10 --json $OUT/fit.json > $OUT/bench.txt 2>&1
grep -cE " ok$" $OUT/bench.txt
