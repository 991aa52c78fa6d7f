#!/usr/bin/env bash
# Run 166 (session 17): stage 111, schedule options on top of level 6, chained
# with the base (-14's build) timed again last.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader | tee $OUT/gpu.txt
B=gpu-bundle-diag/r152
mkdir -p $OUT/ab
SHAPES="2,8,256,64 1,8,512,64 1,8,512,64,causal 1,1,1,64 4,8,512,64 1,8,1024,64"
OUT=$OUT/ab ROUNDS=5 STEP_TIMEOUT=100 bash scripts/ab-chain.sh split-n64,split "$SHAPES" graph \
  base=$B/sdpa-base lvl6=$B/sdpa-lvl6 nomerge=$B/sdpa-nomerge retend=$B/sdpa-retend sched4reg=$B/sdpa-sched4reg base2=$B/sdpa-base > $OUT/ab.log 2>&1
tar czf $OUT/ab-json.tgz -C $OUT ab && rm -rf $OUT/ab
echo "A/B: ok $(grep -c ' ok$' $OUT/ab.log), FAIL $(grep -c FAIL $OUT/ab.log)"
grep -A14 "^variant  shape" $OUT/ab.log | cut -c1-150
