#!/usr/bin/env bash
# Run 151 (session 17): stage 88's ablation of split-n64's step repeated on
# 4d4863e (run 136's ablate.py: base, nok, nov, noexp, nopv, noqk; wrong
# outputs by design, only the times count), then four prologue builds
# (patches next to this script) chained with the base timed again last.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $OUT/gpu.txt
B=gpu-bundle-diag/r152
mkdir -p $OUT/abl $OUT/ab
SHAPES="2,8,256,64 1,8,512,64 1,8,512,64,causal 1,1,1,64 4,8,512,64 1,8,1024,64 1,8,384,64 2,8,640,64"
OUT=$OUT/ab ROUNDS=5 STEP_TIMEOUT=200 bash scripts/ab-chain.sh split-n64 "$SHAPES" graph \
  base=$B/sdpa-base vcp=$B/sdpa-vcp kvi=$B/sdpa-kvi initfirst=$B/sdpa-initfirst qcp=$B/sdpa-qcp base2=$B/sdpa-base > $OUT/ab.log 2>&1
ASHAPES="2,8,256,64 1,8,512,64 1,1,512,64 1,1,1,64 1,8,1024,64"
OUT=$OUT/abl ROUNDS=2 STEP_TIMEOUT=100 bash scripts/ab-chain.sh split-n64 "$ASHAPES" graph \
  base=$B/sdpa-base nok=$B/sdpa-nok nov=$B/sdpa-nov noexp=$B/sdpa-noexp nopv=$B/sdpa-nopv noqk=$B/sdpa-noqk > $OUT/abl.log 2>&1
tar czf $OUT/ab-json.tgz -C $OUT ab abl && rm -rf $OUT/ab $OUT/abl
echo "prologue A/B: ok $(grep -c ' ok$' $OUT/ab.log), FAIL $(grep -c FAIL $OUT/ab.log)"
grep -A60 "^variant  shape" $OUT/ab.log
echo; echo "ablation (wrong outputs by design):"
grep -A40 "^variant  shape" $OUT/abl.log
