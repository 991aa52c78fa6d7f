#!/usr/bin/env bash
# Run 318 (issue 42): why the packed twin runs 22% longer than the dense
# kernel on the same blocks (run 316): ncu's full set on one launch of
# each at (4,16,4096,128) wgmma (serving_time's first shape: the dense
# kernel for [B, H, S, D], the packed twin for [B, S, H, D]).
#   carry: gpu-bundle-diag/r317 (serving_time_main.xz)
set -uo pipefail
W=/tmp/logs318; rm -rf $W; mkdir -p $W /tmp/b318
xz -dc gpu-bundle-diag/r317/serving_time_main.xz > /tmp/b318/st; chmod +x /tmp/b318/st
S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader > $S
R="--ignored --nocapture --test-threads=1"
for k in sdpa_wgmma_d128 sdpa_wgmma_packed_d128; do
  timeout 240 ncu --clock-control none --set full -k "regex:^$k\$" --launch-count 1 --kill on \
    /tmp/b318/st bshd $R > $W/$k.txt 2> $W/$k.err; echo "$k ncu rc=$?" >> $S
  cp $W/$k.txt $OUT/ 2>/dev/null
  grep -E "Duration|Executed Instructions |Registers Per|DRAM Throughput|L2 Hit Rate|L1/TEX Hit|Memory Throughput|Compute \(SM\)|Warp Cycles Per Issued|Local|Achieved Occupancy|Issue Slots Busy|Stall" $W/$k.txt | head -30 >> $S
done
tar czf $OUT/logs.tgz -C $W .
echo "elapsed ${SECONDS}s" >> $S
cat $S
