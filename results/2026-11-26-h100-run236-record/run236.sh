#!/usr/bin/env bash
# Run 236 (session 26): an H200 record of main's kernels (bundle of
# 69288ff; PTX byte-identical to cc3abf0's) with `wgmma-fp8pv` timed on an
# H200 for the first time: every variant, check and torch peer
# (scripts/device-run.sh record), then compute-sanitizer memcheck and
# initcheck on the same bundle (skipped by run 235's time guard).
set -uo pipefail
STEP_TIMEOUT=170 bash scripts/device-run.sh record run236
echo "after record ${SECONDS}s"
if [ "$SECONDS" -lt 480 ]; then STEP_TIMEOUT=50 bash scripts/device-run.sh sanitize gpu-bundle/bin memcheck initcheck; fi
echo "elapsed ${SECONDS}s"
