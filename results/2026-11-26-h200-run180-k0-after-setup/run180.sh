#!/usr/bin/env bash
# Run 180 (session 19): stages 121b/121c, each group's first K tile by its
# threads' cp.async issued after thread 0's barrier setup (k0b; k0c with the
# proxy fence only where the tile is refilled), against bd8aaea's build and
# stage 121's k0 in one chain, then k0b's checks.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader | tee $OUT/gpu.txt
B=gpu-bundle-diag/r180
mkdir -p $OUT/ab
SHAPES="2,8,256,64 1,8,512,64 1,8,512,64,causal 1,1,1,64 4,8,512,64 1,8,1024,64 2,8,200,64 1,8,2048,64"
OUT=$OUT/ab ROUNDS=5 STEP_TIMEOUT=100 bash scripts/ab-chain.sh split-n64 "$SHAPES" graph \
  base=$B/sdpa-base k0=$B/sdpa-k0 k0b=$B/k0b/sdpa k0c=$B/k0c/sdpa base2=$B/sdpa-base > $OUT/ab.log 2>&1
tar czf $OUT/ab-json.tgz -C $OUT ab && rm -rf $OUT/ab
echo "A/B: ok $(grep -c ' ok$' $OUT/ab.log), FAIL $(grep -c FAIL $OUT/ab.log)"
R="--ignored --nocapture --test-threads=1"
{ timeout 150 $B/k0b/gpu_gate $R; timeout 100 $B/k0b/overlap $R; } > $OUT/gate.log 2>&1
grep -E "passed, .* failed|pairs checked|FAIL" $OUT/gate.log | tail -8
timeout 200 $B/k0b/gpu_fuzz $R > $OUT/fuzz.log 2>&1; tail -3 $OUT/fuzz.log
SAN=$(mktemp -d); OUT=$SAN BIN=$B/k0b SANITIZE_TIMEOUT=120 bash scripts/sanitize.sh racecheck synccheck; cp $SAN/sanitize.log $OUT/
grep -E "Race reported|Read access|Write access" $OUT/sanitize.log | head -6
grep -A12 "^variant  shape" $OUT/ab.log | cut -c1-200
