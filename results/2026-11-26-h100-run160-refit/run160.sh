#!/usr/bin/env bash
# Run 160 (session 17, stage 109): every variant but naive on the 141 D = 64
# shapes of host/tests/kernels.rs's measured winners (shapes-d64.txt), on
# the record build's kernels (gpu-bundle-diag/r152/sdpa-base, 4d4863e; the
# kernels of b94c587), to refit split-n64 D = 64 after stages 90b, 91 and 95
# and re-score the picks. PART=1 times lines 1-71, PART=2 the rest.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $OUT/gpu.txt
F=results/2026-11-26-h100-run160-refit/shapes-d64.txt
if [ "${PART:-1}" = 1 ]; then SHAPES=$(head -71 $F); else SHAPES=$(tail -n +72 $F); fi
# shellcheck disable=SC2086
timeout 560 gpu-bundle-diag/r152/sdpa-base bench --variants mma,wgmma,split,split-wg,split-n64 --shapes $SHAPES \
  --modes graph --samples 10 --json $OUT/fit-part${PART:-1}.json > $OUT/bench-part${PART:-1}.txt 2>&1
echo "rows ok: $(grep -cE ' ok$' $OUT/bench-part${PART:-1}.txt), FAIL: $(grep -c FAIL $OUT/bench-part${PART:-1}.txt)"
tail -3 $OUT/bench-part${PART:-1}.txt
