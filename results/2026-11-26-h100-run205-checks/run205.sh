#!/usr/bin/env bash
# Run 205 (session 23): on 4128ada's kernels (stage 132c), the checks
# record 2026-11-26-4's build had and this one has not: compute-sanitizer's
# four tools over every kernel, the adversarial and determinism suites;
# then run 198's 35 boundary shapes timed again for scripts/check-picks.py
# (`wgmma` D = 64 is 2-5% faster since the cost model was last scored).
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader | tee $OUT/gpu.txt
R="--ignored --nocapture --test-threads=1"
SAN=$(mktemp -d); OUT=$SAN SANITIZE_TIMEOUT=110 bash scripts/sanitize.sh memcheck racecheck synccheck initcheck; cp $SAN/sanitize.log $OUT/
for t in adversarial determinism; do timeout 120 gpu-bundle/bin/$t $R > $OUT/$t.log 2>&1; echo "$t rc=$?"; tail -3 $OUT/$t.log; done
echo "${SECONDS}s"
# shellcheck disable=SC2046
timeout 200 gpu-bundle/bin/sdpa bench --variants mma,wgmma,split,split-wg,split-n64 \
  --shapes $(cat results/2026-11-26-h100-run198-picks/shapes.txt) \
  --modes graph --samples 10 --json $OUT/picks.json > $OUT/picks.txt 2>&1
echo "rows ok: $(grep -cE ' ok$' $OUT/picks.txt), FAIL: $(grep -c FAIL $OUT/picks.txt)"
grep -E "^(memcheck|racecheck|synccheck|initcheck)" $OUT/sanitize.log
echo "elapsed ${SECONDS}s"
