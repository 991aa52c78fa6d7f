#!/usr/bin/env bash
# Run 227 (session 25): stage 147's diagnostic: `wgmma-fp8pv` with its row
# sums on the CUDA cores (gpu-bundle-diag/r227), checked at the long rows.
set -uo pipefail
LONG="1,16,16384,128 4,16,4096,128 2,16,8192,64 4,16,2048,64 1,16,16384,128,causal"
ROUNDS=1 bash scripts/device-run.sh ab wgmma,wgmma-fp8pv "$LONG" sums=gpu-bundle-diag/r227/sdpa
grep -E "^wgmma" $OUT/ab.log | grep -v "\.\.\." | cut -c1-140
echo "elapsed ${SECONDS}s"
