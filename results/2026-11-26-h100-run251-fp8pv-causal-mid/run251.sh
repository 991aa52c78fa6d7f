#!/usr/bin/env bash
# Run 251 (session 28): stage 153's causal threshold from between its two
# timed sides (8192: 1.011, 16384: 0.955). `main` = stage 153 (causal rows
# under 16384 keys keep the three-warpgroup kernel), `all` = run 247's
# `new` build (the 192-key kernel for every D = 128 row of 2048+ keys).
# A/B chain main -> all -> main2, 3 rounds (predictions:
# results/2026-11-26-predictions-run251.md).
set -uo pipefail
E=gpu-bundle-diag/r251
ROWS="1,16,10240,128,causal 1,16,12288,128,causal 1,16,14336,128,causal 1,16,16384,128,causal"
ROUNDS=3 STEP_TIMEOUT=90 bash scripts/device-run.sh ab wgmma-fp8pv "$ROWS" main=$E/sdpa-main all=$E/sdpa-all main2=$E/sdpa-main
echo "elapsed ${SECONDS}s"
