#!/usr/bin/env bash
# Run 216 (session 24): stage 142, `split-wg` with the lazy maxima and the fast
# path of stage 138 (experiment build in gpu-bundle-diag/r216/swg).
# `run216.sh ab`: the A/B
# chain base -> swg -> base2; `run216.sh checks`: the experiment's gate,
# overlap, GPU fuzz, adversarial and determinism suites, then
# compute-sanitizer racecheck and synccheck on its kernels (logs in
# checks.tgz).
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader | tee $OUT/gpu.txt
E=gpu-bundle-diag/r216/swg
R="--ignored --nocapture --test-threads=1"
if [ "${1:-}" = checks ]; then
  FINAL=$OUT; OUT=$OUT/checks; mkdir -p $OUT
  for t in gpu_gate overlap gpu_fuzz adversarial determinism; do
    timeout 150 $E/$t $R > $OUT/$t.log 2>&1; echo "$t rc=$?"
    grep -E "test result|pairs checked|FAIL|panicked" $OUT/$t.log | tail -3
  done
  grep -E "wgmma" $OUT/gpu_gate.log | head -12 > $OUT/gate-wgmma.txt
  SAN=$(mktemp -d); BIN=$E OUT=$SAN SANITIZE_TIMEOUT=110 bash scripts/sanitize.sh racecheck synccheck; cp $SAN/sanitize.log $OUT/
  grep -E "^(racecheck|synccheck)" $OUT/sanitize.log
  tar czf $FINAL/checks.tgz -C $FINAL checks && rm -rf $FINAL/checks
  echo "checks ${SECONDS}s"
  exit 0
fi
mkdir -p $OUT/ab
SHAPES="1,12,768,64 4,8,1024,64,causal 1,6,2048,64,causal 2,8,640,64,causal 1,8,1024,64 4,16,2048,64 2,8,768,128,causal 1,6,1536,128,causal 1,3,2048,128"
OUT=$OUT/ab ROUNDS=${ROUNDS:-5} STEP_TIMEOUT=100 bash scripts/ab-chain.sh split-wg "$SHAPES" graph \
  base=gpu-bundle/bin/sdpa swg=$E/sdpa base2=gpu-bundle/bin/sdpa > $OUT/ab.log 2>&1
tar czf $OUT/ab-json.tgz -C $OUT ab && rm -rf $OUT/ab
echo "A/B: ok $(grep -c ' ok$' $OUT/ab.log), FAIL $(grep -c FAIL $OUT/ab.log); ${SECONDS}s"
grep -A10 "^variant  shape" $OUT/ab.log | cut -c1-150
echo "elapsed ${SECONDS}s"
