#!/usr/bin/env bash
# Run 232 (session 26): stage 149, `wgmma-fp8pv` with each key block's row
# sums as a tensor-core product of their own (`wgmma.m64n8k32.e4m3` against
# rows of ones, a fresh accumulator per block) added to f32 running sums,
# instead of 32 FADDs a step. A/B chain base -> sums -> base2 of
# `wgmma-fp8pv` at the long rows (predictions: results/2026-11-26-predictions-run232.md),
# then the sums build's checks and memcheck.
set -uo pipefail
E=gpu-bundle-diag/r232
LONG="1,16,16384,128 4,16,4096,128 4,16,4096,128,causal 1,16,16384,128,causal 2,16,8192,64 4,16,2048,64 2,16,8192,64,causal 4,16,1024,128"
ROUNDS=3 STEP_TIMEOUT=240 bash scripts/device-run.sh ab wgmma-fp8pv "$LONG" base=$E/sdpa-base sums=$E/sdpa-sums base2=$E/sdpa-base
echo "after A/B ${SECONDS}s"
STEP_TIMEOUT=170 bash scripts/device-run.sh checks $E
mkdir -p /tmp/c && tar xzf $OUT/checks.tgz -C /tmp/c
grep -E "passed, .* failed" /tmp/c/checks/gpu_gate.log | tail -1
grep "^\[wgmma-f" /tmp/c/checks/gpu_gate.log | grep -o "rel_l2=[0-9.e+-]*" | sort -t= -k2 -g | sed -n '1p;$p'
if [ "$SECONDS" -lt 470 ]; then STEP_TIMEOUT=100 bash scripts/device-run.sh sanitize $E memcheck; fi
echo "elapsed ${SECONDS}s"
