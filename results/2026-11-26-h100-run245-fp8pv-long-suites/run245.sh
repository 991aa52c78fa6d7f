#!/usr/bin/env bash
# Run 245 (session 27): the GPU suites that run every row of the kernel
# table, now through `Attention::upload_kernel`, so that `wgmma-fp8pv`'s
# 192-key kernel runs on their shapes too (run 244's found the selection
# picking the other kernel there and failed on the harness's check):
# overlap, GPU fuzz, adversarial, determinism, then racecheck and
# synccheck over `sanitize_target` (predictions:
# results/2026-11-26-predictions-run245.md).
set -uo pipefail
E=${E:-gpu-bundle-diag/r245}
for t in overlap gpu_fuzz adversarial determinism; do
  timeout 150 $E/$t --ignored --nocapture --test-threads=1 > $OUT/$t.log 2>&1; rc=$?
  echo "$t rc=$rc: $(grep -E "test result" $OUT/$t.log | tail -1)"
  grep -E "long_d128" $OUT/$t.log | head -3 | cut -c1-150
done
BIN=$E SANITIZE_TIMEOUT=90 bash scripts/sanitize.sh racecheck synccheck >/dev/null 2>&1
grep -E "^(racecheck|synccheck)" $OUT/sanitize.log
tar czf $OUT/suites.tgz -C $OUT overlap.log gpu_fuzz.log adversarial.log determinism.log sanitize.log && rm $OUT/*.log
echo "elapsed ${SECONDS}s"
