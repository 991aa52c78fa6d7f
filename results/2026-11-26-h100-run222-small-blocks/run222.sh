#!/usr/bin/env bash
# Run 222 (session 25): stage 145, `split-n64` D = 64 in smaller blocks
# (proxies b and a, builds in gpu-bundle-diag/r222): the A/B chain
# base -> b -> a -> base2, then the torch peers at the mission shapes.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader | tee $OUT/gpu.txt
E=gpu-bundle-diag/r222
mkdir -p $OUT/ab
SHAPES="1,8,512,64 2,8,256,64 1,8,512,64,causal 1,8,384,64 1,8,1024,64 4,8,512,64 1,1,1,64"
OUT=$OUT/ab ROUNDS=${ROUNDS:-4} STEP_TIMEOUT=100 bash scripts/ab-chain.sh split-n64 "$SHAPES" graph \
  base=gpu-bundle/bin/sdpa b=$E/b/sdpa a=$E/a/sdpa base2=gpu-bundle/bin/sdpa > $OUT/ab.log 2>&1
tar czf $OUT/ab-json.tgz -C $OUT ab && rm -rf $OUT/ab
echo "A/B: ok $(grep -c ' ok$' $OUT/ab.log), FAIL $(grep -c FAIL $OUT/ab.log); ${SECONDS}s"
timeout 200 python3 scripts/peers.py 1,8,512,64 2,8,256,64 > $OUT/peers.jsonl 2>$OUT/peers.err
python3 scripts/peers.py --summarize $OUT/peers.jsonl | tail -9
grep -A8 "^variant  shape" $OUT/ab.log | cut -c1-170
echo "elapsed ${SECONDS}s"
