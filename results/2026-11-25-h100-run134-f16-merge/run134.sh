#!/usr/bin/env bash
# Run 134: stage 86 A/B (the merge's exchange as f16), old = the build of
# 9a2f5d4 (gpu-bundle-diag/r134/sdpa-old), new = this tree
# (gpu-bundle-diag/r134/sdpa-new, the same as gpu-bundle/bin/sdpa); then
# the new build's correctness gate, GPU fuzz and issue-3 checks.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $OUT/gpu.txt
SHAPES="2,8,256,64 1,8,512,64 1,8,512,64,causal 1,1,1,64 1,8,1024,64 1,4,2048,64 4,8,512,64 1,8,256,128 1,8,512,128 2,8,512,128 1,4,1024,128"
mkdir -p $OUT/ab
OUT=$OUT/ab ROUNDS=3 STEP_TIMEOUT=200 bash scripts/ab-chain.sh split,split-n64,split-wg "$SHAPES" graph \
  old=gpu-bundle-diag/r134/sdpa-old new=gpu-bundle-diag/r134/sdpa-new > $OUT/ab.log 2>&1
tar czf $OUT/ab-json.tgz -C $OUT ab && rm -rf $OUT/ab
STEP_TIMEOUT=200 bash scripts/gpu-run.sh gate fuzz issue3 > $OUT/checks.txt 2>&1
rm -f $OUT/device.txt
tail -30 $OUT/checks.txt
grep -A40 "^variant  shape" $OUT/ab.log
