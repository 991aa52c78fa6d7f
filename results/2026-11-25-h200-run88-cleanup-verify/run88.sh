#!/usr/bin/env bash
# run 88: the review-cleanup commit's bundle (host grid from KvTiles; PTX unchanged): gate + overlap + GPU fuzz.
set -uo pipefail
STEP_TIMEOUT=240 bash scripts/gpu-run.sh gate fuzz > /tmp/run.txt 2>&1
grep -E "passed|failed|FAIL" /tmp/run.txt | tail -5
