#!/usr/bin/env bash
# Run 182 (session 19): stage 122. `late` = stage 105's deferred scale
# loads (O's address and the scale pointers read after the first tensor
# copies); `pline` = late plus AttnParams reordered so that everything a
# block reads before its first tensor copies sits in the constant-cache
# line of the global-memory descriptor (one miss at the start instead of
# two). Chain base -> late -> pline -> base2, then pline's checks.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader | tee $OUT/gpu.txt
B=gpu-bundle-diag/r182
mkdir -p $OUT/ab
SHAPES="2,8,256,64 1,8,512,64 1,8,512,64,causal 1,1,1,64 4,8,512,64 1,8,1024,64 2,8,200,64 1,8,2048,64"
OUT=$OUT/ab ROUNDS=5 STEP_TIMEOUT=100 bash scripts/ab-chain.sh split-n64 "$SHAPES" graph \
  base=$B/sdpa-base late=$B/sdpa-late pline=$B/pline/sdpa base2=$B/sdpa-base > $OUT/ab.log 2>&1
tar czf $OUT/ab-json.tgz -C $OUT ab && rm -rf $OUT/ab
echo "A/B: ok $(grep -c ' ok$' $OUT/ab.log), FAIL $(grep -c FAIL $OUT/ab.log)"
R="--ignored --nocapture --test-threads=1"
{ timeout 150 $B/pline/gpu_gate $R; timeout 100 $B/pline/overlap $R; } > $OUT/gate.log 2>&1
grep -E "passed, .* failed|pairs checked|FAIL" $OUT/gate.log | tail -8
timeout 200 $B/pline/gpu_fuzz $R > $OUT/fuzz.log 2>&1; tail -3 $OUT/fuzz.log
SAN=$(mktemp -d); OUT=$SAN BIN=$B/pline SANITIZE_TIMEOUT=120 bash scripts/sanitize.sh racecheck synccheck; cp $SAN/sanitize.log $OUT/
grep -A11 "^variant  shape" $OUT/ab.log | cut -c1-200
