#!/usr/bin/env bash
# Run 249c (session 28): `wgmma-fp8pv`'s 192-key two-warpgroup kernel at
# D = 64 (stage 154). `c1` = d64-192c-c1.patch (one softmax chain, as
# main's D = 64 kernels), `c4` = d64-192c-c4.patch (four chains), each
# picking the new kernel for every D = 64 problem of 2048+ keys; `base`
# = main (stage 153). A/B chain base -> c1 -> c4 -> base2, 3 rounds
# (predictions: results/2026-11-26-predictions-run249.md).
set -uo pipefail
E=gpu-bundle-diag/r249
# A hang must cost 30 s, not the call: one short row of each new build first.
for b in c1 c4; do
  timeout 30 $E/sdpa-$b bench --variants wgmma-fp8pv --shapes 4,16,2048,64 --modes graph | tail -1 || { echo "$b: failed or hung"; exit 1; }
done
ROWS="4,16,2048,64 4,16,4096,64 2,16,8192,64 1,16,16384,64 2,16,8192,64,causal 1,16,16384,64,causal"
ROUNDS=3 STEP_TIMEOUT=90 bash scripts/device-run.sh ab wgmma-fp8pv "$ROWS" base=$E/sdpa-base c1=$E/sdpa-c1 c4=$E/sdpa-c4 base2=$E/sdpa-base
echo "elapsed ${SECONDS}s"
