#!/usr/bin/env bash
# Run 110 (stage 78): record of the build with `split-wg` (stage 76's 64-row
# blocks with wgmma Q·K^T as a fifth variant; split's P·V in 32-key halves):
# gate + overlap + GPU fuzz, compute-sanitizer x4 + adversarial +
# determinism + planted bug; the 8 issue shapes (graph, graph-overlap), the
# 1-key floor, the 37 crossover shapes of host/tests/kernels.rs and 10 more
# near split-wg's edge (graph), every variant; torch peers; and split's
# build against the previous one (r107's base, 3bff275) in turns.
# Prediction (written before the run): split-wg beats split by 10-20% where
# its 64-row blocks number >= ~128 (B*H*S/64 >= 128) and split is
# recommended ((1,8,1024,64) 10.9 vs 12.7 us in run 109), loses where they
# are fewer (the mission shapes, +7..10%); D = 128 (not measured before):
# within +-10% of split; split itself unchanged (+-1%: P·V's index math
# reordered, same registers).
set -uo pipefail
export STEP_TIMEOUT=240
bash scripts/gpu-run.sh gate fuzz issue3 > /tmp/run.txt 2>&1
SHAPES="2,8,256,64 1,8,512,64 4,16,2048,64 2,16,8192,64 2,16,8192,64,causal 4,16,4096,128 1,16,16384,128 1,16,16384,128,causal"
REST="1,8,1024,64 1,8,1536,64 1,8,2048,64 4,16,1024,64 1,8,512,128 1,8,1024,128 1,8,2048,128 4,16,1024,128 1,8,1024,64,causal 1,8,2048,64,causal 2,16,1024,64 1,16,1024,64 1,12,1024,64 2,8,2048,64,causal 1,8,2048,128,causal 1,4,2048,64 1,8,1536,128 2,4,512,64 8,16,256,64 8,16,512,64 4,16,512,128 8,16,512,128 16,16,256,64 8,16,256,128 4,16,768,64 2,8,512,64 1,8,768,64 4,8,512,64 2,16,512,64 4,16,384,64 2,8,1024,128 1,4,1024,128 1,8,768,128 2,12,768,128 8,16,384,128 2,16,2048,128,causal 1,6,1536,128"
EDGE="8,8,128,64 4,8,256,64 3,8,256,64 1,6,1024,64 2,2,2048,64 1,4,1024,64 4,8,256,128 2,8,512,128 4,8,512,128 2,8,256,128"
B=gpu-bundle/bin/sdpa
V=mma,wgmma,split,split-wg
timeout 300 $B bench --variants $V --shapes $SHAPES --modes graph,graph-overlap --json $OUT/bench-mma.json > $OUT/bench.txt 2>&1
timeout 60 $B bench --variants $V --shapes 1,1,1,64 1,1,1,128 --modes graph >> $OUT/bench.txt 2>&1
timeout 400 $B bench --variants $V --shapes $REST $EDGE --modes graph --json $OUT/crossover.json >> $OUT/bench.txt 2>&1
timeout 240 python3 scripts/peers.py $SHAPES > $OUT/peers.jsonl 2>> $OUT/device.txt
OUT=$OUT/ab ROUNDS=2 bash scripts/ab-chain.sh split "2,8,256,64 1,8,512,64 1,1,1,64 2,8,256,128 1,8,1024,64" graph \
  old=gpu-bundle-diag/r107/sdpa-base new=$B > $OUT/ab.txt 2>&1
(cd $OUT/ab && tar cf ../ab.tar ab-*.json) && rm -r $OUT/ab
cp /tmp/run.txt $OUT/run.txt
grep -E "passed|failed|FAIL|clean|hazard|ERROR|minimal failing" /tmp/run.txt | tail -14
grep -E "FAIL" $OUT/bench.txt | head
python3 scripts/peers.py --summarize $OUT/peers.jsonl | grep -E "floor|cudnn" | head -4
tail -6 $OUT/ab.txt
