#!/usr/bin/env bash
# Run 316 (issue 42): the window tests again with the log-sum-exp check that
# allows each row its scores' error bound (sdpa_tests::lse), and where the
# [B, S, H, D] path's time goes: ncu durations of the prepass and the
# attention kernel, [B, H, S, D] against [B, S, H, D], at (4,16,4096,128)
# wgmma (serving_time's first shape, round 1: 2 x 221 calls of 2 kernels).
#   carry: gpu-bundle-diag/r316
set -uo pipefail
B=gpu-bundle/bin
rm -rf gpu-bundle && mkdir -p gpu-bundle && tar xJf gpu-bundle-diag/r316/gb.tar.xz -C gpu-bundle
W=/tmp/logs316; rm -rf $W; mkdir -p $W
S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader > $S
R="--ignored --nocapture --test-threads=1"
timeout 150 $B/window $R > $W/window.log 2>&1; echo "window rc=$? $(grep -E 'test result' $W/window.log | tail -1)" >> $S
grep -hE "panicked" -A2 $W/window.log | head -8 >> $S
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
echo "ncu: $NCU" >> $S
timeout 300 "$NCU" --clock-control none --metrics gpu__time_duration.sum --csv --page raw \
  -k 'regex:sdpa_(kv_tiles|wgmma|wgmma_packed)_d128$' --launch-count 884 --kill on \
  $B/serving_time bshd $R > $W/ncu.csv 2> $W/ncu.err; echo "ncu rc=$?" >> $S
cp $W/ncu.csv $OUT/ncu.csv 2>/dev/null
tail -5 $W/ncu.err >> $S
tar czf $OUT/logs.tgz -C $W .
echo "elapsed ${SECONDS}s" >> $S
cat $S
