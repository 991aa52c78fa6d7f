#!/usr/bin/env bash
# Run 243 (session 27): stage 152d, what 192-key blocks are worth without
# a partial block: run 242's n192r against base at key lengths that are
# whole multiples of 192 (lead 0), A/B chain base -> n192r -> base2
# (predictions: results/2026-11-26-predictions-run243.md).
set -uo pipefail
E=gpu-bundle-diag/r243
SHAPES="1,16,16320,128 4,16,4032,128 4,16,4032,128,causal 1,16,16320,128,causal 4,16,1152,128 8,16,576,128"
ROUNDS=3 STEP_TIMEOUT=200 bash scripts/device-run.sh ab wgmma-fp8pv "$SHAPES" base=$E/sdpa-base n192r=$E/sdpa-n192r base2=$E/sdpa-base
echo "elapsed ${SECONDS}s"
