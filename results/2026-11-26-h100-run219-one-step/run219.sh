#!/usr/bin/env bash
# Run 219 (session 25): stage 144, go/no-go for `split-n64` D = 64 as 8 key
# groups of one row warp, two blocks per SM (builds in gpu-bundle-diag/r219).
# The A/B chain base -> p4 -> p1 -> base2, then the torch peers at the
# mission shapes in the same run.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader | tee $OUT/gpu.txt
E=gpu-bundle-diag/r219
mkdir -p $OUT/ab
SHAPES="1,8,512,64 2,8,256,64 1,8,512,64,causal 1,8,384,64 1,8,1024,64 4,8,512,64"
OUT=$OUT/ab ROUNDS=${ROUNDS:-4} STEP_TIMEOUT=100 bash scripts/ab-chain.sh split-n64 "$SHAPES" graph \
  base=gpu-bundle/bin/sdpa p4=$E/p4/sdpa p1=$E/p1/sdpa base2=gpu-bundle/bin/sdpa > $OUT/ab.log 2>&1
tar czf $OUT/ab-json.tgz -C $OUT ab && rm -rf $OUT/ab
echo "A/B: ok $(grep -c ' ok$' $OUT/ab.log), FAIL $(grep -c FAIL $OUT/ab.log); ${SECONDS}s"
timeout 200 python3 scripts/peers.py 1,8,512,64 2,8,256,64 > $OUT/peers.jsonl 2>$OUT/peers.err
python3 scripts/peers.py --summarize $OUT/peers.jsonl | tail -12
grep -A10 "^variant  shape" $OUT/ab.log | cut -c1-170
echo "elapsed ${SECONDS}s"
