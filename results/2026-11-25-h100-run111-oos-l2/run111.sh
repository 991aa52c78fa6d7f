#!/usr/bin/env bash
# Run 111: split-wg's recommendation out of sample (29 shapes, every
# variant) and the L2-traffic go/no-go (split at the same keys with 1-128
# blocks). Predictions: results/2026-11-25-predictions-run111.md.
set -uo pipefail
B=gpu-bundle/bin/sdpa
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm > $OUT/device.txt 2>&1
OOS="1,12,768,64 2,6,1024,64 3,8,512,64 1,16,512,64 2,12,512,64 6,8,256,64 2,16,256,64 1,24,512,64 5,8,256,64 1,10,1024,64 1,4,1536,64 1,12,768,128 3,8,512,128 2,6,768,128 1,12,512,128 5,8,256,128 1,8,1280,128 6,16,256,128 3,16,384,128 2,4,1024,128 2,8,1024,64,causal 1,8,1536,128,causal 4,8,1024,64,causal 1,16,1024,128,causal 1,12,512,64 2,12,256,64 3,4,1024,64 12,8,256,64 2,4,1024,64"
L2="1,1,512,64 1,2,512,64 1,4,512,64 1,8,512,64 1,1,256,64 1,4,256,64 1,8,256,64 2,8,256,64 1,1,1,64 1,128,1,64"
for r in 1 2; do
  timeout 120 $B bench --variants split --shapes $L2 --modes graph --json $OUT/l2-$r.json > $OUT/l2-$r.txt 2>&1
done
timeout 400 $B bench --variants mma,wgmma,split,split-wg --shapes $OOS --modes graph --json $OUT/oos.json > $OUT/oos.txt 2>&1
grep -E "FAIL|error" $OUT/*.txt | head
grep -hE "^split " $OUT/l2-1.txt $OUT/l2-2.txt
