#!/usr/bin/env bash
# run 60: validation shapes for the block-count rule of kernels::recommended (predictions in the commit before this run)
SH="2,16,1024,64 1,16,1024,64 1,12,1024,64 2,8,2048,64,causal 1,8,2048,128,causal 1,4,2048,64 1,8,1536,128 2,4,512,64 8,16,256,64"
gpu-bundle/bin/sdpa bench --variants mma,wgmma,split --shapes $SH --modes graph --json $OUT/validate.json 2>&1 | grep -v '^\[' | tee $OUT/validate.txt
