#!/usr/bin/env bash
# Run 91 (diagnostic): how long is wgmma's kv_tiles prepass next to the attention kernel? Nsight
# Compute durations and DRAM throughput of both kernels of one wgmma call at the D=64 shapes where
# wgmma trails or barely leads cuDNN, and at a long D=128 shape.
set -uo pipefail
export OUT=${OUT:-gpu-out}
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > "$OUT/device.txt"
for shape in 4,16,2048,64 2,16,8192,64 4,16,1024,64 4,16,4096,128; do
  timeout 200 "$NCU" --clock-control none --cache-control none -k "regex:sdpa_(kv_tiles|wgmma)_d" -c 2 --launch-skip 6 \
    --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__cycles_active.avg \
    gpu-bundle-diag/sdpa-base bench --variants wgmma --shapes "$shape" --modes direct --samples 1 --launches 4 > "$OUT/ncu-$shape.txt" 2>&1
  echo "== $shape"; grep -E "sdpa_|gpu__time|dram__" "$OUT/ncu-$shape.txt" | sed 's/  */ /g'
done
