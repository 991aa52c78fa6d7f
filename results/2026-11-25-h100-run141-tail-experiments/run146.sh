#!/usr/bin/env bash
# Run 146: base / c4sepx / early4 / c4dw / c4dew / base2, split-n64 and
# split at the D = 64 shapes. Patches next to this script.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $OUT/gpu.txt
SHAPES="2,8,256,64 1,8,512,64 1,8,512,64,causal 1,1,1,64 4,8,512,64 1,8,1024,64 1,8,384,64 2,8,640,64"
mkdir -p $OUT/ab
B=gpu-bundle-diag/r146
OUT=$OUT/ab ROUNDS=5 STEP_TIMEOUT=200 bash scripts/ab-chain.sh split-n64,split "$SHAPES" graph \
  base=$B/sdpa-base c4sepx=$B/sdpa-c4sepx early4=$B/sdpa-early4 c4dw=$B/sdpa-c4dw c4dew=$B/sdpa-c4dew base2=$B/sdpa-base > $OUT/ab.log 2>&1
tar czf $OUT/ab-json.tgz -C $OUT ab && rm -rf $OUT/ab
grep -c " ok$" $OUT/ab.log; grep -c "FAIL" $OUT/ab.log
grep -A60 "^variant  shape" $OUT/ab.log
