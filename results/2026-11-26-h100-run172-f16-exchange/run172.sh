#!/usr/bin/env bash
# Run 172 (session 18): stage 116, f16 merge exchange (experiment
# build gpu-bundle-diag/r172/exp) against ae0a04e's build, then its checks.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader | tee $OUT/gpu.txt
B=gpu-bundle-diag/r172
mkdir -p $OUT/ab
SHAPES="2,8,256,64 1,8,512,64 1,8,512,64,causal 1,1,1,64 4,8,512,64 1,8,1024,64 2,8,200,64 1,8,2048,64"
OUT=$OUT/ab ROUNDS=5 STEP_TIMEOUT=100 bash scripts/ab-chain.sh split-n64,split,split-wg "$SHAPES" graph \
  base=$B/sdpa-base f16x=$B/exp/sdpa base2=$B/sdpa-base > $OUT/ab.log 2>&1
tar czf $OUT/ab-json.tgz -C $OUT ab && rm -rf $OUT/ab
echo "A/B: ok $(grep -c ' ok$' $OUT/ab.log), FAIL $(grep -c FAIL $OUT/ab.log)"
R="--ignored --nocapture --test-threads=1"
{ timeout 150 $B/exp/gpu_gate $R; timeout 100 $B/exp/overlap $R; } > $OUT/gate.log 2>&1
grep -E "passed, .* failed|pairs checked|FAIL" $OUT/gate.log | tail -8
grep -E "^\[split" $OUT/gate.log | grep -oE "^\[[a-z0-9-]+ |rel_l2=[0-9.e-]+" | paste - - | sort | uniq -c | sort -k2,2 -k3,3 | awk "{print}" | tail -30
timeout 200 $B/exp/gpu_fuzz $R > $OUT/fuzz.log 2>&1; tail -3 $OUT/fuzz.log
grep -A26 "^variant  shape" $OUT/ab.log | cut -c1-170
