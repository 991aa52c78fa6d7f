#!/usr/bin/env bash
# Run 244 (session 27): the merge candidate of stage 152: `wgmma-fp8pv`
# at D = 128 runs its 192-key two-warpgroup kernel on non-causal problems
# of 4096+ keys (`kernels::select`), its three-warpgroup kernel otherwise.
# A/B chain base -> new -> base2 at the D = 128 rows of runs 240-243, then
# the new bundle's correctness suites (the sanitizers ran on the same
# kernel body in run 242; its binary is left out for the carry limit)
# (predictions: results/2026-11-26-predictions-run244.md).
set -uo pipefail
E=gpu-bundle-diag/r244
ROWS="1,16,16384,128 4,16,4096,128 4,16,4096,128,causal 1,16,16384,128,causal 4,16,1024,128 2,16,8192,128"
ROUNDS=3 STEP_TIMEOUT=200 bash scripts/device-run.sh ab wgmma-fp8pv "$ROWS" base=$E/sdpa-base new=$E/sdpa-new base2=$E/sdpa-base
echo "after A/B ${SECONDS}s"
for t in gpu_gate overlap gpu_fuzz adversarial determinism; do
  timeout 220 $E/$t --ignored --nocapture --test-threads=1 > $OUT/$t.log 2>&1; rc=$?
  echo "$t rc=$rc: $(grep -E "test result|passed, .* failed" $OUT/$t.log | tail -1)"
done
grep -E "FAIL" $OUT/gpu_gate.log | head -5
grep -E "^\[wgmma-fp8pv +(long|very-long)-d128" $OUT/gpu_gate.log | cut -c1-170
tar czf $OUT/suites.tgz -C $OUT gpu_gate.log overlap.log gpu_fuzz.log adversarial.log determinism.log && rm $OUT/*.log
echo "elapsed ${SECONDS}s"
