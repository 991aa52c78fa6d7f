#!/usr/bin/env bash
# Run 186 (session 20): stage 125b, Nsight Compute stall samples of the
# record build's wgmma at (2,16,8192,64) and (4,16,4096,128).
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader | tee $OUT/gpu.txt
mkdir -p gpu-bundle/bin && cp gpu-bundle-diag/r185/sdpa-base gpu-bundle/bin/sdpa
OUT=$OUT bash scripts/ncu-source.sh 2,16,8192,64 d64 wgmma
OUT=$OUT bash scripts/ncu-source.sh 4,16,4096,128 d128 wgmma
for t in d64 d128; do python3 scripts/ncu-summary.py $OUT/wgmma-$t-sass.csv 30 > $OUT/summary-$t.txt 2>&1; head -45 $OUT/summary-$t.txt; done
gzip $OUT/wgmma-*-sass.csv
