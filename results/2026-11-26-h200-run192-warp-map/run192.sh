#!/usr/bin/env bash
# Run 192 (session 21): stage 128 ("imap": split-n64 D = 64 with its key
# groups interleaved over the warps, so a scheduler's two warps are one
# group's two row warps) against the base, chain base -> imap -> base2;
# then stage 127b: Nsight Compute stall samples of the base and of stage
# 127's px build at (2,8,256,64), to test the reason given for px's loss.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader | tee $OUT/gpu.txt
B=gpu-bundle-diag/r192
mkdir -p $OUT/ab
SHAPES="2,8,256,64 1,8,512,64 1,8,512,64,causal 1,1,1,64 4,8,512,64 2,8,200,64 1,8,1024,64 1,8,2048,64"
OUT=$OUT/ab ROUNDS=4 STEP_TIMEOUT=100 bash scripts/ab-chain.sh split-n64 "$SHAPES" graph \
  base=$B/sdpa-base imap=$B/sdpa-imap base2=$B/sdpa-base > $OUT/ab.log 2>&1
tar czf $OUT/ab-json.tgz -C $OUT ab && rm -rf $OUT/ab
echo "A/B: ok $(grep -c ' ok$' $OUT/ab.log), FAIL $(grep -c FAIL $OUT/ab.log)"
mkdir -p gpu-bundle/bin $OUT/ncu
for b in base px; do
  cp $B/sdpa-$b gpu-bundle/bin/sdpa
  OUT=$OUT/ncu bash scripts/ncu-source.sh 2,8,256,64 $b split-n64 > /dev/null 2>&1
  python3 scripts/ncu-summary.py $OUT/ncu/split-n64-$b-sass.csv 30 > $OUT/ncu/summary-$b.txt 2>&1
done
grep -h -E "Duration|Executed Instructions  |Issue Slots Busy|Warp Cycles Per Issued|Stall Barrier|No Eligible" $OUT/ncu/split-n64-*.txt | head -20
tar czf $OUT/ncu.tgz -C $OUT ncu && rm -rf $OUT/ncu
grep -A10 "^variant  shape" $OUT/ab.log | cut -c1-170
