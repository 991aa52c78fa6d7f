#!/usr/bin/env bash
# Run 136: stage 88 ablation of split-n64's step (see ablate.py): base = the
# build of 14402d3; each other build leaves one part of the step out.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $OUT/gpu.txt
SHAPES="2,8,256,64 1,8,512,64 1,1,512,64 1,1,1,64 1,8,1024,64"
mkdir -p $OUT/ab
B=gpu-bundle-diag/r136
OUT=$OUT/ab ROUNDS=2 STEP_TIMEOUT=200 bash scripts/ab-chain.sh split-n64,split "$SHAPES" graph \
  base=$B/sdpa-base nok=$B/sdpa-nok nov=$B/sdpa-nov noexp=$B/sdpa-noexp nopv=$B/sdpa-nopv noqk=$B/sdpa-noqk > $OUT/ab.log 2>&1
tar czf $OUT/ab-json.tgz -C $OUT ab && rm -rf $OUT/ab
grep -A40 "^variant  shape" $OUT/ab.log
