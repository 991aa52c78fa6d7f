#!/usr/bin/env bash
# run 61 (H100): the recommendation's shapes (runs 59-60 and the mission shape) on a second GPU
gpu-bundle/bin/sdpa info | tail -1 | tee $OUT/device.txt
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv >> $OUT/device.txt
SH="1,8,512,64 1,8,1024,64 1,8,1536,64 1,8,2048,64 4,16,1024,64 4,16,2048,64 1,8,512,128 1,8,1024,128 1,8,2048,128 4,16,1024,128 1,8,1024,64,causal 1,8,2048,64,causal 2,16,1024,64 1,16,1024,64 1,12,1024,64 2,8,2048,64,causal 1,8,2048,128,causal 1,4,2048,64 1,8,1536,128 2,4,512,64 8,16,256,64 2,8,256,64"
gpu-bundle/bin/sdpa bench --variants mma,wgmma,split --shapes $SH --modes graph --json $OUT/h100-crossover.json 2>&1 | grep -v '^\[' | tee $OUT/h100-crossover.txt
