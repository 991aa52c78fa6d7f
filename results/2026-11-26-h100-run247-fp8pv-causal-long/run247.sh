#!/usr/bin/env bash
# Run 247 (session 28): where else `wgmma-fp8pv`'s 192-key kernel wins.
# `new` (patch causal-long.patch) picks it for every D = 128 problem of
# 2048+ keys, causal or not; `base` is main (non-causal 4096+ only). A/B
# chain base -> new -> base2, 3 rounds; then compute-sanitizer memcheck
# and initcheck over main's `sanitize_target`, which runs the 192-key
# kernel too (not yet run on it) (predictions:
# results/2026-11-26-predictions-run247.md).
set -uo pipefail
E=gpu-bundle-diag/r247
ROWS="4,16,2048,128 4,16,3072,128 4,16,4096,128 4,16,4096,128,causal 2,16,8192,128,causal 1,16,16384,128,causal 1,8,32768,128,causal"
ROUNDS=3 STEP_TIMEOUT=200 bash scripts/device-run.sh ab wgmma-fp8pv "$ROWS" base=$E/sdpa-base new=$E/sdpa-new base2=$E/sdpa-base
echo "after A/B ${SECONDS}s"
STEP_TIMEOUT=150 bash scripts/device-run.sh sanitize $E memcheck initcheck
echo "elapsed ${SECONDS}s"
