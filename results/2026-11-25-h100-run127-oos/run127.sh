#!/usr/bin/env bash
# Run 127: results/2026-11-25-predictions-run127.md's sets R and O, every
# variant but naive, graph mode, 10 samples.
set -uo pipefail
B=gpu-bundle/bin/sdpa
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $OUT/gpu.txt
timeout 300 $B bench --variants mma,wgmma,split,split-wg,split-n64 --shapes 1,28,512,128 1,8,2048,128 10,16,256,128 12,16,320,128 16,16,256,128 2,12,640,128 2,12,768,128 2,16,2048,128,causal 2,20,384,128 2,8,1024,128 24,16,128,128 3,10,1024,128 3,16,384,128 3,16,512,128 4,16,1024,128 4,16,512,128 4,24,256,128 4,8,512,128 5,16,512,128 6,16,256,128 6,16,384,128 6,8,768,128 8,12,256,128 8,16,256,128 8,16,384,128 8,16,512,128  --modes graph --samples 10 --json $OUT/remeasure.json > $OUT/remeasure.txt 2>&1
timeout 250 $B bench --variants mma,wgmma,split,split-wg,split-n64 --shapes 1,10,512,128 2,3,1024,128 1,5,768,128 3,6,512,128 1,24,384,128 2,12,384,128 1,3,2048,128 1,6,1536,128,causal 2,8,768,128,causal 1,14,640,128 4,6,384,128 2,16,256,128 1,9,512,64 1,3,1536,64 2,5,512,64 1,20,384,64 1,11,768,64 2,8,640,64,causal 1,5,2048,64 3,6,384,64  --modes graph --samples 10 --json $OUT/oos.json > $OUT/oos.txt 2>&1
grep -cE " ok$" $OUT/remeasure.txt $OUT/oos.txt; grep -E "FAIL" $OUT/*.txt | head
