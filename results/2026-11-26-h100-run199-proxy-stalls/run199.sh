#!/usr/bin/env bash
# Run 199 (session 22): stage 130b, Nsight Compute stall samples of the
# base split-n64 at (1,8,512,64) and of stage 130's 64-row proxy at
# (4,8,256,64) (the same work per SM, half the K/V bytes per block), to see
# where the proxy spends the time its halved traffic should have saved.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader | tee $OUT/gpu.txt
B=gpu-bundle-diag/r196
mkdir -p gpu-bundle/bin $OUT/ncu
for pair in base:1,8,512,64 proxy:4,8,256,64 base:2,8,256,64 proxy:8,8,128,64; do
  b=${pair%%:*} shape=${pair#*:} tag=${pair%%:*}-${pair#*:}
  tag=${tag//,/_}
  cp $B/sdpa-$b gpu-bundle/bin/sdpa
  OUT=$OUT/ncu bash scripts/ncu-source.sh $shape $tag split-n64 > /dev/null 2>&1
  python3 scripts/ncu-summary.py $OUT/ncu/split-n64-$tag-sass.csv 30 > $OUT/ncu/summary-$tag.txt 2>&1
  echo "== $tag"
  grep -h -E "Duration|Executed Instructions  |Issue Slots Busy|Warp Cycles Per Issued" $OUT/ncu/split-n64-$tag.txt | head -5
  grep -E "^(prologue|loop|after|before|total)" -i $OUT/ncu/summary-$tag.txt | head -6
done
tar czf $OUT/ncu.tgz -C $OUT ncu && rm -rf $OUT/ncu
