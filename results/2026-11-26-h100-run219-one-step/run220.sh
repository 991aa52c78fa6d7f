#!/usr/bin/env bash
# Run 220 (session 25): stage 144's diagnostic: occupancy of the proxy
# (ncu launch statistics and occupancy of base, p1, p1c at (1,8,512,64)),
# then the A/B chain base -> p1 -> p1c -> base2.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader | tee $OUT/gpu.txt
E=gpu-bundle-diag/r219
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
for b in base=gpu-bundle/bin/sdpa p1=$E/p1/sdpa p1c=$E/p1c/sdpa; do
  tag=${b%%=*} bin=${b#*=}
  timeout 120 "$NCU" --clock-control none -k regex:sdpa_split_n64_d -c 1 --launch-skip 3 \
    --section LaunchStats --section Occupancy --metrics sm__cycles_active.avg,gpu__time_duration.sum \
    "$bin" bench --variants split-n64 --shapes 1,8,512,64 --modes direct --samples 1 --launches 4 > $OUT/ncu-$tag.txt 2>&1
  echo "== $tag"; grep -E "Block Limit|Shared Memory Configuration|Dynamic Shared|Registers Per|Theoretical Occ|Achieved Occ|Waves Per SM|gpu__time|cycles_active" $OUT/ncu-$tag.txt
done
mkdir -p $OUT/ab
OUT=$OUT/ab ROUNDS=3 STEP_TIMEOUT=100 bash scripts/ab-chain.sh split-n64 "1,8,512,64 2,8,256,64 1,8,384,64 1,8,1024,64" graph \
  base=gpu-bundle/bin/sdpa p1=$E/p1/sdpa p1c=$E/p1c/sdpa base2=gpu-bundle/bin/sdpa > $OUT/ab.log 2>&1
tar czf $OUT/ab-json.tgz -C $OUT ab && rm -rf $OUT/ab
grep -A6 "^variant  shape" $OUT/ab.log | cut -c1-170
echo "elapsed ${SECONDS}s"
