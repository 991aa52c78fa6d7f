#!/usr/bin/env bash
# Run 194 (session 21): the checks run 191 did not run on ab123f4's
# kernels (stage 125's lean wgmma landed): compute-sanitizer's four tools
# over every kernel (scripts/sanitize.sh), the adversarial-input and the
# determinism suites.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader | tee $OUT/gpu.txt
R="--ignored --nocapture --test-threads=1"
SAN=$(mktemp -d); OUT=$SAN SANITIZE_TIMEOUT=110 bash scripts/sanitize.sh memcheck racecheck synccheck initcheck; cp $SAN/sanitize.log $OUT/
for t in adversarial determinism; do timeout 120 gpu-bundle/bin/$t $R > $OUT/$t.log 2>&1; echo "$t rc=$?"; tail -3 $OUT/$t.log; done
grep -E "^(memcheck|racecheck|synccheck|initcheck)" $OUT/sanitize.log
