#!/usr/bin/env bash
# Run 246 (session 28): the H100 record of branch `fp8long` (727a8fd;
# `wgmma-fp8pv` at D = 128 runs the 192-key kernel on non-causal problems
# of 4096+ keys): every variant, check and torch peer
# (scripts/device-run.sh record), to be the baseline the speed gate
# reads after the merge (predictions: results/2026-11-26-predictions-run246.md).
set -uo pipefail
bash scripts/device-run.sh record run246
echo "elapsed ${SECONDS}s"
