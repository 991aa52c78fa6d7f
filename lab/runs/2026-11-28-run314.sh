#!/usr/bin/env bash
# Run 314 (issue 42), speed of what session 38 built: [B, S, H, D] against
# [B, H, S, D] at the long record shapes (serving_time's bshd test), and a
# sliding window and a softcap through the bench beside the plain kernels;
# packed batches of one length, for the fixed cost per block.
set -uo pipefail
B=gpu-bundle/bin
D=gpu-bundle-diag/r313
[ -x $B/sdpa ] || { rm -rf gpu-bundle && mkdir -p gpu-bundle && tar xJf $D/gb.tar.xz -C gpu-bundle; }
W=/tmp/logs314; rm -rf $W; mkdir -p $W
S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader > $S
R="--ignored --nocapture --test-threads=1"
pack() { tar czf $OUT/logs.tgz -C $W . ; }
timeout 200 $B/serving_time bshd $R > $W/serving.log 2>&1; echo "serving rc=$?" >> $S
grep -E "^\|" $W/serving.log >> $S
pack
for opt in "" "--window 1024,0" "--softcap 30" "--window 1024,0 --softcap 30"; do
  timeout 90 $B/sdpa bench --shapes 1,16,16384,128,causal 2,16,8192,64 --variants wgmma,wgmma-fp8pv --modes graph $opt > $W/bench.log 2>&1
  echo "bench [$opt] rc=$?" >> $S
  grep -E "^wgmma" $W/bench.log | cut -c1-120 >> $S
done
pack
# The packed batch's fixed cost per block (lab/packed-speed.md): 12288 rows
# in sequences of 192 n rows (n = 1, 2, 4, 8: 64 blocks a head of 3 n
# tiles each, not causal); time against n is a line whose intercept is c.
for n in 1 2 4 8; do
  L=$((192 * n)); lens=$(python3 -c "print(','.join(['$L'] * (12288 // $L)))")
  timeout 60 $B/sdpa bench --shapes 1,16,$L,128 --variants wgmma --modes graph --packed $lens > $W/block-$n.log 2>&1
  echo "blocks of $n x 192: $(grep -E 'packed' $W/block-$n.log | cut -c1-120)" >> $S
done
pack
echo "elapsed ${SECONDS}s" >> $S
cat $S
