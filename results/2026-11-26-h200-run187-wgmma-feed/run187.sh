#!/usr/bin/env bash
# Run 187 (session 20): stage 125c, wgmma with half (vthalf) or none
# (vtnone) of the Vt bytes copied per step: wrong outputs by design, timed
# only (AB_TIMES_ONLY=1). Chain base -> vthalf -> vtnone -> base2.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader | tee $OUT/gpu.txt
B=gpu-bundle-diag/r187
mkdir -p $OUT/ab
SHAPES="2,16,8192,64 4,16,2048,64 2,16,8192,64,causal 4,16,4096,128"
OUT=$OUT/ab ROUNDS=3 STEP_TIMEOUT=150 AB_TIMES_ONLY=1 bash scripts/ab-chain.sh wgmma "$SHAPES" graph \
  base=$B/sdpa-base vthalf=$B/sdpa-vthalf vtnone=$B/sdpa-vtnone base2=$B/sdpa-base > $OUT/ab.log 2>&1
tar czf $OUT/ab-json.tgz -C $OUT ab && rm -rf $OUT/ab
grep -A12 "^variant  shape" $OUT/ab.log | cut -c1-200
