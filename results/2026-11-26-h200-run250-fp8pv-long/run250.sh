#!/usr/bin/env bash
# Run 250 (session 28): stages 152e-153's selection on an H200, where
# `wgmma-fp8pv`'s 192-key kernel was never timed. `old` = main before
# the merge (51a3f3e's build: the three-warpgroup 64-key kernel on every
# D = 128 row), `new` = main at stage 153 (the 192-key kernel from 2048
# keys, 16384 when causal). A/B chain old -> new -> old2, 3 rounds
# (predictions: results/2026-11-26-predictions-run250.md).
set -uo pipefail
E=gpu-bundle-diag/r250
ROWS="4,16,1024,128 4,16,2048,128 4,16,4096,128 1,16,16384,128 2,16,8192,128,causal 1,16,16384,128,causal"
ROUNDS=3 STEP_TIMEOUT=90 bash scripts/device-run.sh ab wgmma-fp8pv "$ROWS" old=$E/sdpa-old new=$E/sdpa-new old2=$E/sdpa-old
echo "elapsed ${SECONDS}s"
