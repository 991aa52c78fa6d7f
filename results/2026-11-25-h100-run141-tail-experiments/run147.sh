#!/usr/bin/env bash
# Run 147: base / head (b94c587) / vhalves / statsall / head2 for split-n64
# at the D = 64 shapes. Patches next to this script.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $OUT/gpu.txt
SHAPES="2,8,256,64 1,8,512,64 1,8,512,64,causal 1,1,1,64 4,8,512,64 1,8,1024,64 1,8,384,64 2,8,640,64"
mkdir -p $OUT/ab
B=gpu-bundle-diag/r147
OUT=$OUT/ab ROUNDS=5 STEP_TIMEOUT=200 bash scripts/ab-chain.sh split-n64 "$SHAPES" graph \
  base=$B/sdpa-base head=$B/sdpa-head vhalves=$B/sdpa-vhalves statsall=$B/sdpa-statsall head2=$B/sdpa-head > $OUT/ab.log 2>&1
tar czf $OUT/ab-json.tgz -C $OUT ab && rm -rf $OUT/ab
grep -c " ok$" $OUT/ab.log; grep -c "FAIL" $OUT/ab.log
grep -A60 "^variant  shape" $OUT/ab.log
