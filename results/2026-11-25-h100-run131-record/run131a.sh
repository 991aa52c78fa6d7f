#!/usr/bin/env bash
# Run 131a (stage 85 record, checks): gate + overlap + GPU fuzz, then
# compute-sanitizer x4, adversarial, determinism and the planted bug.
set -uo pipefail
export STEP_TIMEOUT=240
bash scripts/gpu-run.sh gate fuzz issue3 > $OUT/run.txt 2>&1
grep -E "passed|failed|FAIL|clean|hazard|ERROR" $OUT/run.txt | tail -12
grep -A80 "deliberate bug" $OUT/issue3.log | grep -E "Test failed" | cut -c1-40; grep -A80 "deliberate bug" $OUT/issue3.log | grep -cE "Test failed"
