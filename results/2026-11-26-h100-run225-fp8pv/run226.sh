#!/usr/bin/env bash
# Run 226 (session 25): stage 147's timings: `wgmma` of the fp8pv branch
# against main's (base -> fp8pv -> base2), then `wgmma` and `wgmma-fp8pv`
# of the branch side by side.
set -uo pipefail
E=gpu-bundle-diag/r225
LONG="1,16,16384,128 4,16,4096,128 4,16,4096,128,causal 4,16,1024,128 2,16,8192,64 4,16,2048,64 2,16,8192,64,causal 8,16,512,64"
ROUNDS=3 bash scripts/device-run.sh ab wgmma "$LONG" base=gpu-bundle/bin/sdpa fp8pv=$E/sdpa base2=gpu-bundle/bin/sdpa
mv $OUT/ab.log $OUT/ab-wgmma.log; mv $OUT/ab-json.tgz $OUT/ab-wgmma-json.tgz
ROUNDS=2 bash scripts/device-run.sh ab wgmma,wgmma-fp8pv "$LONG 1,8,512,64" fp8pv=$E/sdpa

# compute-sanitizer again, with sanitize_target judging each kernel by its
# variant's gate (run 225's copy judged wgmma-fp8pv by the default gate).
STEP_TIMEOUT=120 bash scripts/device-run.sh sanitize $E racecheck synccheck memcheck
echo "elapsed ${SECONDS}s"
