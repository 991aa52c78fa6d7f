#!/usr/bin/env bash
# Run 235 (session 26): an H100 record of main's kernels (a312520; PTX
# byte-identical to cc3abf0's, the reviewed build) with `wgmma-fp8pv` among
# the recorded variants for the first time (scripts/gpu-run.sh's default
# VARIANTS): every variant, check and torch peer, then the adversarial and
# determinism suites and compute-sanitizer memcheck and initcheck on the
# same bundle if time is left (the reviewed `wgmma-fp8pv` had only its gate
# and bench rerun, run 231).
set -uo pipefail
STEP_TIMEOUT=170 bash scripts/device-run.sh record run235
echo "after record ${SECONDS}s"
for t in adversarial determinism; do
  timeout 60 gpu-bundle/bin/$t --ignored --nocapture --test-threads=1 > $OUT/$t.log 2>&1; echo "$t rc=$?: $(grep -E 'test result' $OUT/$t.log | tail -1)"
done
if [ "$SECONDS" -lt 450 ]; then STEP_TIMEOUT=60 bash scripts/device-run.sh sanitize gpu-bundle/bin memcheck initcheck; fi
echo "elapsed ${SECONDS}s"
