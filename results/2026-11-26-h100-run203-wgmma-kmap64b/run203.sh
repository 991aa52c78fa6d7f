#!/usr/bin/env bash
# Run 203 (session 22): stage 132c (kmap64b:
# wgmma's K tiles by tensor copy from the input, the prepass writing Vt
# only, at D = 64 only, D = 128 PTX unchanged). Chain base -> kmap64b -> base2, 5 rounds, wgmma
# only; then kmap64b's checks (gate, overlap, GPU fuzz).
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader | tee $OUT/gpu.txt
B=gpu-bundle-diag/r203
mkdir -p $OUT/ab
SHAPES="4,16,2048,64 4,16,1024,64 8,16,512,64 2,16,8192,64 2,16,8192,64,causal 4,16,4096,128 4,16,1024,128 1,16,16384,128 1,8,2048,64"
OUT=$OUT/ab ROUNDS=5 STEP_TIMEOUT=100 bash scripts/ab-chain.sh wgmma "$SHAPES" graph \
  base=$B/sdpa-base kmap64b=$B/kmap64b/sdpa base2=$B/sdpa-base > $OUT/ab.log 2>&1
tar czf $OUT/ab-json.tgz -C $OUT ab && rm -rf $OUT/ab
echo "A/B: ok $(grep -c ' ok$' $OUT/ab.log), FAIL $(grep -c FAIL $OUT/ab.log); ${SECONDS}s"
R="--ignored --nocapture --test-threads=1"
{ timeout 150 $B/kmap64b/gpu_gate $R; timeout 80 $B/kmap64b/overlap $R; timeout 120 $B/kmap64b/gpu_fuzz $R; } > $OUT/checks.log 2>&1
grep -E "test result|pairs checked|passed, .* failed|FAIL|panicked" $OUT/checks.log | tail -8
grep -A12 "^variant  shape" $OUT/ab.log | cut -c1-170
echo "elapsed ${SECONDS}s"
