#!/usr/bin/env bash
# Run 141: three experiments on split-n64's step, A/B chain against the
# build of 5989953 (base): chains4 (each row's max and sum as four chains),
# pairs (K/V tensor copies of 128-byte rows, two keys each, 128-byte
# swizzle; split-n64 D = 64 only, even key counts), both (chains4 + pairs),
# poly (every fourth score tile's exponentials by a degree-3 polynomial on
# the FMA pipe). Patches next to this script.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $OUT/gpu.txt
SHAPES="2,8,256,64 1,8,512,64 1,8,512,64,causal 1,1,2,64 4,8,512,64 1,8,1024,64 1,8,384,64 2,8,640,64"
mkdir -p $OUT/ab
B=gpu-bundle-diag/r141
OUT=$OUT/ab ROUNDS=3 STEP_TIMEOUT=200 bash scripts/ab-chain.sh split-n64,split "$SHAPES" graph \
  base=$B/sdpa-base chains4=$B/sdpa-chains4 pairs=$B/sdpa-pairs both=$B/sdpa-both poly=$B/sdpa-poly > $OUT/ab.log 2>&1
tar czf $OUT/ab-json.tgz -C $OUT ab && rm -rf $OUT/ab
grep -c " ok$" $OUT/ab.log; grep -c "FAIL" $OUT/ab.log
grep -A60 "^variant  shape" $OUT/ab.log
