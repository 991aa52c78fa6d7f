#!/usr/bin/env bash
# Run 329 (issue 41): the committed quantizer (tiles of 8 steps, LAG_BYTES
# 32 MiB): bits on the sm_90a image and on the sm_89 image (JIT on the
# H200: its build keeps 2 steps in flight, not timed before), memcheck on
# the sm_89 image, the time table, and one ncu profile (speed of light and
# warp states) of the rotating launch at (4,16,2048,64) for the next step.
# Predictions: bits identical to the CPU reference on both images, memcheck
# clean, times within 3% of run 328's "8 steps, 32 MiB" column.
#   carry: gpu-bundle-diag/r329
set -uo pipefail
W=/tmp/logs329; rm -rf $W; mkdir -p $W /tmp/b329
xz -dc gpu-bundle-diag/r329/quantizer_gpu.xz > /tmp/b329/q; chmod +x /tmp/b329/q
S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader > $S
R="--ignored --nocapture --test-threads=1"
CS=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
for img in sm_90a sm_89; do
  timeout 90 env SDPA_IMAGE=$img /tmp/b329/q $R codes_and_scales three_tensors bad_inputs > $W/bits-$img.log 2>&1
  echo "bits $img rc=$? $(grep -E 'test result' $W/bits-$img.log | tail -1)" >> $S; grep -E "configurations|launches|panicked" $W/bits-$img.log >> $S
done
timeout 150 env SDPA_IMAGE=sm_89 "$CS" --tool memcheck --error-exitcode 9 /tmp/b329/q $R codes_and_scales three_tensors > $W/memcheck89.log 2>&1
echo "memcheck sm_89 rc=$? $(grep -E 'ERROR SUMMARY' $W/memcheck89.log | tail -1)" >> $S
timeout 60 /tmp/b329/q $R quantizer_time > $W/time.log 2>&1
echo "== time rc=$?" >> $S; grep -E "^\| [0-9]" $W/time.log >> $S
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
SDPA_QUANT_SHAPES=4,16,2048,64 timeout 90 "$NCU" --clock-control none --section SpeedOfLight --section WarpStateStats --section Occupancy \
  -k "regex:^sdpa_quantize_f16_d64\$" -s 0 -c 1 /tmp/b329/q $R quantizer_time > $W/ncu.log 2>&1
echo "ncu rc=$?" >> $S; grep -E "Duration|DRAM Throughput|L2 Cache Throughput|Achieved Occupancy|Stall|Warp Cycles Per Issued|Issued Warp" $W/ncu.log | head -20 >> $S
tar czf $OUT/logs.tgz -C $W .
echo "elapsed ${SECONDS}s" >> $S
cat $S
