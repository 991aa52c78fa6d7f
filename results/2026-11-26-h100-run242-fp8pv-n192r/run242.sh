#!/usr/bin/env bash
# Run 242 (session 27): stage 152c, `wgmma-fp8pv` D = 128 as two
# warpgroups x 192-key blocks with a short first block instead of
# padding (n192r). A/B chain base
# -> n192r -> base2 at the D = 128 long rows (run 241 timed the padded n192), then every correctness
# suite of the n192r bundle and racecheck/synccheck (predictions:
# results/2026-11-26-predictions-run242.md).
set -uo pipefail
E=gpu-bundle-diag/r242
LONG="1,16,16384,128 4,16,4096,128 4,16,4096,128,causal 1,16,16384,128,causal 4,16,1024,128"
ROUNDS=3 STEP_TIMEOUT=220 bash scripts/device-run.sh ab wgmma-fp8pv "$LONG" base=$E/sdpa-base n192r=$E/sdpa-n192r base2=$E/sdpa-base
echo "after A/B ${SECONDS}s"
STEP_TIMEOUT=200 bash scripts/device-run.sh checks $E
echo "elapsed ${SECONDS}s"
