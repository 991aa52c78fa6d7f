#!/usr/bin/env bash
# Run 188 (session 20): stage 126. `pin` = stage 89's pins on the current
# code (PIN_MODE 1: the SASS still waits for V before the exponentials);
# `anc` = the pins plus a volatile store of the row sums before the "V
# full" wait (PIN_MODE 2: the exponentials run before it). Chain base ->
# pin -> anc -> base2 on split-n64, then anc's checks and sanitizers.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader | tee $OUT/gpu.txt
B=gpu-bundle-diag/r188
mkdir -p $OUT/ab
SHAPES="2,8,256,64 1,8,512,64 1,8,512,64,causal 1,1,1,64 4,8,512,64 1,8,1024,64 2,8,200,64 1,8,2048,64"
OUT=$OUT/ab ROUNDS=5 STEP_TIMEOUT=100 bash scripts/ab-chain.sh split-n64 "$SHAPES" graph \
  base=$B/sdpa-base pin=$B/sdpa-pin anc=$B/anc/sdpa base2=$B/sdpa-base > $OUT/ab.log 2>&1
tar czf $OUT/ab-json.tgz -C $OUT ab && rm -rf $OUT/ab
echo "A/B: ok $(grep -c ' ok$' $OUT/ab.log), FAIL $(grep -c FAIL $OUT/ab.log)"
R="--ignored --nocapture --test-threads=1"
{ timeout 150 $B/anc/gpu_gate $R; timeout 100 $B/anc/overlap $R; } > $OUT/gate.log 2>&1
grep -E "passed, .* failed|pairs checked|FAIL" $OUT/gate.log | tail -6
timeout 150 $B/anc/gpu_fuzz $R > $OUT/fuzz.log 2>&1; tail -3 $OUT/fuzz.log
SAN=$(mktemp -d); OUT=$SAN BIN=$B/anc SANITIZE_TIMEOUT=120 bash scripts/sanitize.sh racecheck synccheck; cp $SAN/sanitize.log $OUT/
grep -E "ERROR SUMMARY|hazard|error" $OUT/sanitize.log | head -8
grep -A26 "^variant  shape" $OUT/ab.log | cut -c1-190
