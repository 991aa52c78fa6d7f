#!/usr/bin/env bash
# Run 237 (session 26): compute-sanitizer's four tools over main's kernels
# (bundle of 69288ff; PTX byte-identical to cc3abf0's, the reviewed
# `wgmma-fp8pv` included), which runs 235-236 left out, then the mission
# shapes once more: `split-n64` and `split` beside the torch peers.
set -uo pipefail
STEP_TIMEOUT=100 bash scripts/device-run.sh sanitize gpu-bundle/bin memcheck initcheck racecheck synccheck
cp $OUT/sanitize.log /tmp/sanitize.log
timeout 120 gpu-bundle/bin/sdpa bench --variants split,split-n64 --shapes 2,8,256,64 1,8,512,64 --modes graph --json $OUT/mission.json > $OUT/mission.txt 2>&1
grep -E "^split" $OUT/mission.txt
STEP_TIMEOUT=120 bash scripts/device-run.sh peers "2,8,256,64 1,8,512,64"
cp /tmp/sanitize.log $OUT/sanitize.log
echo "elapsed ${SECONDS}s"
