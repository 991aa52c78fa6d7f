#!/usr/bin/env bash
# Run 125a (stage 83 record, checks): gate + overlap + GPU fuzz, then
# compute-sanitizer x4, adversarial, determinism and the planted bug
# (gpu-bundle-bug) on the build with split-n64.
# Prediction: every check passes (split-n64's two entries included) and the
# planted bug fails and shrinks at every split-family entry.
set -uo pipefail
export STEP_TIMEOUT=240
bash scripts/gpu-run.sh gate fuzz issue3 > $OUT/run.txt 2>&1
grep -E "passed|failed|FAIL|clean|hazard|ERROR|minimal failing" $OUT/run.txt | tail -20
grep -c "sdpa_split_n64" $OUT/gate.log $OUT/fuzz.log $OUT/issue3.log
