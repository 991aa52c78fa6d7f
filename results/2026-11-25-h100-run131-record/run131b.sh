#!/usr/bin/env bash
# Run 131b (stage 85 record, timings): A/B against a619ed9's build, then the
# 8 issue shapes (graph, graph-overlap), the 1-key floor, naive, the peers.
set -uo pipefail
SHAPES="2,8,256,64 1,8,512,64 4,16,2048,64 2,16,8192,64 2,16,8192,64,causal 4,16,4096,128 1,16,16384,128 1,16,16384,128,causal"
B=gpu-bundle/bin/sdpa
V=mma,wgmma,split,split-wg,split-n64
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.draw,temperature.gpu --format=csv; $B info; } > $OUT/device.txt 2>&1
AB="2,8,256,64 1,8,512,64 1,8,512,64,causal 1,1,1,64 1,8,1024,64 1,4,2048,64 1,8,512,128 2,8,512,128 1,4,1024,64 4,8,512,64"
mkdir -p $OUT/ab
OUT=$OUT/ab ROUNDS=2 STEP_TIMEOUT=200 bash scripts/ab-chain.sh split,split-n64,split-wg "$AB" graph \
  old=gpu-bundle-diag/r131/sdpa-old new=$B > $OUT/ab.log 2>&1
tar czf $OUT/ab-json.tgz -C $OUT ab && rm -rf $OUT/ab
timeout 300 $B bench --variants $V --shapes $SHAPES --modes graph,graph-overlap --json $OUT/bench-mma.json > $OUT/bench.txt 2>&1
timeout 60 $B bench --variants $V --shapes 1,1,1,64 1,1,1,128 --modes graph >> $OUT/bench.txt 2>&1
timeout 60 $B bench --variants naive --shapes 2,8,256,64 1,8,512,64 4,16,2048,64 --json $OUT/bench-naive.json >> $OUT/bench.txt 2>&1
timeout 240 python3 scripts/peers.py $SHAPES > $OUT/peers.jsonl 2>> $OUT/device.txt
grep -A32 "^variant  shape" $OUT/ab.log
python3 scripts/peers.py --summarize $OUT/peers.jsonl | grep -E "floor|cudnn" | head -4
grep -E "^(split|split-n64) +(2,8,256,64|1,8,512,64) " $OUT/bench.txt | cut -c1-75
grep -E "FAIL" $OUT/bench.txt | head
