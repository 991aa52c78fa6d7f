#!/usr/bin/env bash
# Run 302 (issue 41): Nsight Compute on the quantizer's first two launches
# at (4,16,2048,64) (f16 Q, K, V, Hadamard on Q and K, one launch), to find
# what holds it at 1.2-1.4 TB/s (lab/quantizer.md). Prediction: DRAM
# throughput well under peak with warps stalled on the ticket/lag waits
# (long scoreboard or membar), not on memory bandwidth.
set -uo pipefail
mkdir -p gpu-bundle && tar xJf gpu-bundle-diag/r299/gb.tar.xz -C gpu-bundle
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
timeout 80 "$NCU" --kernel-name regex:sdpa_quantize --launch-count 2 \
  --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section LaunchStats --section Occupancy \
  gpu-bundle/bin/quantizer_gpu --ignored --nocapture --test-threads=1 quantizer_time > "$OUT/ncu.txt" 2>&1
grep -E "sdpa_quantize|Duration|DRAM Throughput|Memory Throughput|Compute \(SM\)|Achieved Occupancy|Registers|Grid Size|Block Size|Stall|Warp Cycles|Issued Warp|L2 Hit|Mem Busy|Max Bandwidth" "$OUT/ncu.txt" | head -60
