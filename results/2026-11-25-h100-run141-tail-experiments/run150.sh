#!/usr/bin/env bash
# Run 150: head / testwait / hint / head2 for split-n64, split and wgmma.
# Patches next to this script.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $OUT/gpu.txt
SHAPES="2,8,256,64 1,8,512,64 1,8,512,64,causal 1,1,1,64 1,8,1024,64 4,16,2048,64"
mkdir -p $OUT/ab
B=gpu-bundle-diag/r150
OUT=$OUT/ab ROUNDS=5 STEP_TIMEOUT=200 bash scripts/ab-chain.sh split-n64,split,wgmma "$SHAPES" graph \
  head=$B/sdpa-head testwait=$B/sdpa-testwait hint=$B/sdpa-hint head2=$B/sdpa-head > $OUT/ab.log 2>&1
tar czf $OUT/ab-json.tgz -C $OUT ab && rm -rf $OUT/ab
grep -c " ok$" $OUT/ab.log; grep -c "FAIL" $OUT/ab.log
grep -A60 "^variant  shape" $OUT/ab.log
