#!/usr/bin/env bash
# Run 179 (session 19): stage 121, each group copies its first K tile by cp.async before the barrier setup (experiment
# build gpu-bundle-diag/r179/exp) against bd8aaea's build, then its checks.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader | tee $OUT/gpu.txt
B=gpu-bundle-diag/r179
mkdir -p $OUT/ab
SHAPES="2,8,256,64 1,8,512,64 1,8,512,64,causal 1,1,1,64 4,8,512,64 1,8,1024,64 2,8,200,64 1,8,2048,64"
OUT=$OUT/ab ROUNDS=5 STEP_TIMEOUT=100 bash scripts/ab-chain.sh split-n64 "$SHAPES" graph \
  base=$B/sdpa-base k0=$B/exp/sdpa base2=$B/sdpa-base > $OUT/ab.log 2>&1
tar czf $OUT/ab-json.tgz -C $OUT ab && rm -rf $OUT/ab
echo "A/B: ok $(grep -c ' ok$' $OUT/ab.log), FAIL $(grep -c FAIL $OUT/ab.log)"
R="--ignored --nocapture --test-threads=1"
{ timeout 150 $B/exp/gpu_gate $R; timeout 100 $B/exp/overlap $R; } > $OUT/gate.log 2>&1
grep -E "passed, .* failed|pairs checked|FAIL" $OUT/gate.log | tail -8
grep -E "split-n64" $OUT/gate.log | awk '{print}' | head -3
timeout 200 $B/exp/gpu_fuzz $R > $OUT/fuzz.log 2>&1; tail -3 $OUT/fuzz.log
SAN=$(mktemp -d); OUT=$SAN BIN=$B/exp SANITIZE_TIMEOUT=120 bash scripts/sanitize.sh racecheck synccheck initcheck; cp $SAN/sanitize.log $OUT/
grep -A26 "^variant  shape" $OUT/ab.log | cut -c1-170
