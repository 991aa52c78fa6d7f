#!/usr/bin/env bash
# Run 92 (stage 65): kv_tiles with every load before its first store (sdpa-kv, a520413) against
# ad4ae0b (sdpa-base), wgmma at the shapes it serves; then the new prepass's Nsight Compute duration.
set -uo pipefail
export OUT=${OUT:-gpu-out}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > "$OUT/device.txt"
mkdir -p "$OUT/ab"
OUT="$OUT/ab" ROUNDS=2 bash scripts/ab-bench.sh gpu-bundle-diag/sdpa-base gpu-bundle-diag/sdpa-kv wgmma \
  "4,16,1024,64 4,16,2048,64 8,16,512,64 2,16,8192,64 2,16,8192,64,causal 4,16,1024,128 4,16,4096,128 1,16,16384,128 2,8,256,64" graph > "$OUT/ab.txt" 2>&1
(cd "$OUT" && tar cf ab.tar ab && rm -r ab)
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
for shape in 4,16,2048,64 4,16,1024,64 4,16,4096,128; do
  timeout 200 "$NCU" --clock-control none --cache-control none -k "regex:sdpa_kv_tiles_d" -c 1 --launch-skip 3 \
    --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed \
    gpu-bundle-diag/sdpa-kv bench --variants wgmma --shapes "$shape" --modes direct --samples 1 --launches 4 > "$OUT/ncu.txt" 2>&1
  echo "== ncu new prepass $shape"; grep -E "gpu__time|dram__" "$OUT/ncu.txt" | sed 's/  */ /g'
done | tee "$OUT/ncu-prepass.txt"
rm -f "$OUT/ncu.txt"
cat "$OUT/device.txt"; grep -v "^\[" "$OUT/ab.txt" | grep -vE "^== round|^ *$" | tail -11
