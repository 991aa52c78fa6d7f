#!/usr/bin/env bash
# Run 234 (session 26): stage 150, `wgmma-fp8pv` with the ones columns back
# in P·V (`wgmma.m64n(D + 8)k32.e4m3`, run 226's fastest form) and flushed
# after every key block into f32 row sums (so the FP8 accumulator sums 64
# keys at a time). A/B chain base -> ones -> base2 of `wgmma-fp8pv` at the
# long rows (predictions: results/2026-11-26-predictions-run234.md), then
# the ones build's checks and memcheck.
set -uo pipefail
E=gpu-bundle-diag/r234
LONG="1,16,16384,128 4,16,4096,128 4,16,4096,128,causal 1,16,16384,128,causal 2,16,8192,64 4,16,2048,64 2,16,8192,64,causal 4,16,1024,128"
ROUNDS=3 STEP_TIMEOUT=240 bash scripts/device-run.sh ab wgmma-fp8pv "$LONG" base=$E/sdpa-base ones=$E/sdpa-ones base2=$E/sdpa-base
echo "after A/B ${SECONDS}s"
STEP_TIMEOUT=170 bash scripts/device-run.sh checks $E
mkdir -p /tmp/c && tar xzf $OUT/checks.tgz -C /tmp/c
grep -E "passed, .* failed" /tmp/c/checks/gpu_gate.log | tail -1
grep "^\[wgmma-f" /tmp/c/checks/gpu_gate.log | grep -o "rel_l2=[0-9.e+-]*" | sort -t= -k2 -g | sed -n '1p;$p'
grep "very-long" /tmp/c/checks/gpu_gate.log | grep "wgmma-f" | cut -c1-160
if [ "$SECONDS" -lt 505 ]; then STEP_TIMEOUT=80 bash scripts/device-run.sh sanitize $E memcheck; fi
echo "elapsed ${SECONDS}s"
