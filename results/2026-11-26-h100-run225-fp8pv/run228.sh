#!/usr/bin/env bash
# Run 228 (session 25): stage 148, the final `wgmma-fp8pv` (f32 row sums):
# its bundle's checks (gpu-bundle-diag/r228), memcheck, then `wgmma` and
# `wgmma-fp8pv` side by side at the long rows.
set -uo pipefail
E=gpu-bundle-diag/r228
STEP_TIMEOUT=200 bash scripts/device-run.sh checks $E
mkdir -p /tmp/c && tar xzf $OUT/checks.tgz -C /tmp/c
grep -E "passed, .* failed" /tmp/c/checks/gpu_gate.log | tail -1
grep "^\[wgmma-f" /tmp/c/checks/gpu_gate.log | grep -o "rel_l2=[0-9.e+-]*" | sort -t= -k2 -g | sed -n '1p;$p'
grep "very-long" /tmp/c/checks/gpu_gate.log | grep "seed=0" | cut -c1-150
STEP_TIMEOUT=120 bash scripts/device-run.sh sanitize $E memcheck
LONG="1,16,16384,128 4,16,4096,128 4,16,4096,128,causal 1,16,16384,128,causal 2,16,8192,64 4,16,2048,64 2,16,8192,64,causal"
ROUNDS=2 bash scripts/device-run.sh ab wgmma,wgmma-fp8pv "$LONG" b=$E/sdpa
grep -E "^wgmma" $OUT/ab.log | grep -v "\.\.\." | sort -u | cut -c1-140
echo "elapsed ${SECONDS}s"
