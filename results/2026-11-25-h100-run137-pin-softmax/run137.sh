#!/usr/bin/env bash
# Run 137: stage 89 A/B (the softmax pinned before the V-full wait): base =
# the build of 14402d3, pin = this tree (the same as gpu-bundle/bin/sdpa);
# then the new build's correctness gate, GPU fuzz and issue-3 checks.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $OUT/gpu.txt
SHAPES="2,8,256,64 1,8,512,64 1,8,512,64,causal 2,8,256,64,causal 1,1,1,64 1,1,512,64 1,8,1024,64 1,4,2048,64 4,8,512,64 1,8,512,128 2,16,2048,64"
mkdir -p $OUT/ab
B=gpu-bundle-diag/r137
OUT=$OUT/ab ROUNDS=3 STEP_TIMEOUT=200 bash scripts/ab-chain.sh split-n64,split,split-wg "$SHAPES" graph \
  base=$B/sdpa-base pin=$B/sdpa-pin > $OUT/ab.log 2>&1
tar czf $OUT/ab-json.tgz -C $OUT ab && rm -rf $OUT/ab
STEP_TIMEOUT=200 bash scripts/gpu-run.sh gate fuzz issue3 > $OUT/checks.txt 2>&1
rm -f $OUT/device.txt
grep -E "passed|failed|clean|Test failed" $OUT/checks.txt | sort | uniq -c
grep -A40 "^variant  shape" $OUT/ab.log
