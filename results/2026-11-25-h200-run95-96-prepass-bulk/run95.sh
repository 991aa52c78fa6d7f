#!/usr/bin/env bash
# Run 95 (diagnostic): what bounds the kv_tiles prepass? Nsight Compute details (memory workload
# tables, warp states, source counters) of sdpa_kv_tiles_d64 at (4,16,2048,64), ad4ae0b's build.
set -uo pipefail
export OUT=${OUT:-gpu-out}
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
nvidia-smi --query-gpu=name,driver_version --format=csv > "$OUT/device.txt"
timeout 300 "$NCU" --cache-control none -k "regex:sdpa_kv_tiles_d" -c 1 --launch-skip 3 \
  --section SpeedOfLight --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables \
  --section WarpStateStats --section SchedulerStats --section Occupancy --section LaunchStats --section SourceCounters \
  --export /tmp/kv -f gpu-bundle-diag/sdpa-base bench --variants wgmma --shapes 4,16,2048,64 --modes direct --samples 1 --launches 4 > "$OUT/ncu.log" 2>&1
"$NCU" --import /tmp/kv.ncu-rep --page details > "$OUT/kv-details.txt" 2>&1
"$NCU" --import /tmp/kv.ncu-rep --page source --print-source sass --csv > "$OUT/kv-sass.csv" 2>&1
grep -E "Duration|Throughput|Hit Rate|Warp Cycles Per Issued|Achieved Occupancy|Theoretical Occupancy|Block Limit|Stall|Sectors/Req|Mem Busy|Max Bandwidth|L2 Compression|Excessive" "$OUT/kv-details.txt" | head -60
