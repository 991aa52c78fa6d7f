#!/usr/bin/env bash
# Run 217 (session 24): stage 143, `RowMax::moves_above` lowered by a
# relative 2^-20 (a unit test found that with factors of ~1e8 and more the
# roundings could let a score at the threshold reach 2^(slack + huge)) on
# this tree's bundle: the gate, overlap, GPU fuzz, adversarial (extreme
# scales) and determinism suites, then an A/B of `wgmma` against stage 138's
# build (gpu-bundle-diag/r211/lazy/sdpa), chain base -> margin -> base2.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader | tee $OUT/gpu.txt
R="--ignored --nocapture --test-threads=1"
mkdir -p $OUT/checks
for t in gpu_gate overlap gpu_fuzz adversarial determinism; do
  timeout 150 gpu-bundle/bin/$t $R > $OUT/checks/$t.log 2>&1; echo "$t rc=$?"
  grep -E "test result|pairs checked|passed, .* failed|FAIL|panicked" $OUT/checks/$t.log | tail -2
done
tar czf $OUT/checks.tgz -C $OUT checks && rm -rf $OUT/checks
mkdir -p $OUT/ab
OUT=$OUT/ab ROUNDS=3 STEP_TIMEOUT=100 bash scripts/ab-chain.sh wgmma "4,16,2048,64 2,16,8192,64 4,16,4096,128 8,16,512,64 1,8,2048,64" graph \
  base=gpu-bundle-diag/r211/lazy/sdpa margin=gpu-bundle/bin/sdpa base2=gpu-bundle-diag/r211/lazy/sdpa > $OUT/ab.log 2>&1
tar czf $OUT/ab-json.tgz -C $OUT ab && rm -rf $OUT/ab
grep -A6 "^variant  shape" $OUT/ab.log | cut -c1-150
echo "elapsed ${SECONDS}s"
