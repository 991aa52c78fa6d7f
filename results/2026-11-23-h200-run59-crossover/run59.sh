#!/usr/bin/env bash
# run 59: where split stops being the fastest: mma, wgmma, split at 512..4096 keys, D=64 and 128, 1 and 4 batches
SH="1,8,512,64 1,8,1024,64 1,8,1536,64 1,8,2048,64 4,16,1024,64 4,16,2048,64 1,8,512,128 1,8,1024,128 1,8,2048,128 4,16,1024,128 1,8,1024,64,causal 1,8,2048,64,causal"
gpu-bundle/bin/sdpa bench --variants mma,wgmma,split --shapes $SH --modes graph --json $OUT/crossover.json 2>&1 | grep -v '^\[' | tee $OUT/crossover.txt
