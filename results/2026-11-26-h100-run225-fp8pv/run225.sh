#!/usr/bin/env bash
# Run 225 (session 25): stage 147's checks: the fp8pv branch's bundle
# (gpu-bundle-diag/r225): gate, overlap, GPU fuzz, adversarial,
# determinism, racecheck, synccheck, then memcheck.
set -uo pipefail
E=gpu-bundle-diag/r225
STEP_TIMEOUT=170 bash scripts/device-run.sh checks $E
tar xzf $OUT/checks.tgz -C /tmp && grep "^\[wgmma-f" /tmp/checks/gpu_gate.log | grep -o "rel_l2=[0-9.e+-]*" | sort -t= -k2 -g | sed -n '1p;$p'
grep -E "passed, .* failed" /tmp/checks/gpu_gate.log | tail -1
grep -E "fp8pv" /tmp/checks/gpu_fuzz.log | head -3
STEP_TIMEOUT=120 bash scripts/device-run.sh sanitize $E memcheck
echo "elapsed ${SECONDS}s"
