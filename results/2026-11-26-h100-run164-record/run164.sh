#!/usr/bin/env bash
# Run 164 (stage 110 record): PART=A the A/B against -14's build, the record
# bench and peers; PART=B every check. The record's inputs go to $OUT.
set -uo pipefail
SHAPES="2,8,256,64 1,8,512,64 4,16,2048,64 2,16,8192,64 2,16,8192,64,causal 4,16,4096,128 1,16,16384,128 1,16,16384,128,causal"
B=gpu-bundle/bin/sdpa
V=mma,wgmma,split,split-wg,split-n64
if [ "${PART:-A}" = A ]; then
  { nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.draw,temperature.gpu --format=csv; $B info; } > $OUT/device.txt 2>&1
  mkdir -p $OUT/ab
  OUT=$OUT/ab ROUNDS=3 STEP_TIMEOUT=120 bash scripts/ab-chain.sh split-n64,split "2,8,256,64 1,8,512,64 1,8,512,64,causal 4,8,512,64 1,8,1024,64" graph \
    base=gpu-bundle-bug/sdpa-base new=$B > $OUT/ab.log 2>&1
  tar czf $OUT/ab-json.tgz -C $OUT ab && rm -rf $OUT/ab
  timeout 200 $B bench --variants $V --shapes $SHAPES --modes graph,graph-overlap --json $OUT/bench-mma.json > $OUT/bench.txt 2>&1
  timeout 40 $B bench --variants $V --shapes 1,1,1,64 1,1,1,128 --modes graph >> $OUT/bench.txt 2>&1
  timeout 40 $B bench --variants naive --shapes 2,8,256,64 1,8,512,64 4,16,2048,64 --json $OUT/bench-naive.json >> $OUT/bench.txt 2>&1
  timeout 150 python3 scripts/peers.py $SHAPES > $OUT/peers.jsonl 2>> $OUT/device.txt
  grep -A6 "^variant  shape" $OUT/ab.log
  python3 scripts/peers.py --summarize $OUT/peers.jsonl | grep -E "floor|cudnn" | head -4
  grep -E "^(split|split-n64) +(2,8,256,64|1,8,512,64) " $OUT/bench.txt | cut -c1-75
  echo "bench FAIL rows: $(grep -c FAIL $OUT/bench.txt)"
else
  STEP_TIMEOUT=150 bash scripts/gpu-run.sh gate fuzz issue3 > $OUT/run.txt 2>&1
  grep -E "passed|failed|FAIL|clean|hazard|ERROR" $OUT/run.txt | tail -12
  echo "planted bug, failing fuzz cases reported: $(grep -A80 'deliberate bug' $OUT/issue3.log | grep -cE 'Test failed')"
fi
