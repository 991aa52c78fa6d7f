#!/usr/bin/env bash
# Run 148 (stages 91 + 95 record): A/B against 5989953's build, the record bench
# and peers, then every check (the base build of 5989953 and the phase-clock build travel in gpu-bundle-bug/). Returns 8 files: the record's inputs and
# extras.tgz (ab, bench.txt, run.txt).
set -uo pipefail
SHAPES="2,8,256,64 1,8,512,64 4,16,2048,64 2,16,8192,64 2,16,8192,64,causal 4,16,4096,128 1,16,16384,128 1,16,16384,128,causal"
B=gpu-bundle/bin/sdpa
V=mma,wgmma,split,split-wg,split-n64
X=$OUT/extras; mkdir -p $X/ab
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.draw,temperature.gpu --format=csv; $B info; } > $OUT/device.txt 2>&1
AB="2,8,256,64 1,8,512,64 1,8,512,64,causal 2,8,256,64,causal 4,8,512,64 1,8,1024,64"
OUT=$X/ab ROUNDS=3 STEP_TIMEOUT=120 bash scripts/ab-chain.sh split-n64,split "$AB" graph \
  base=gpu-bundle-bug/sdpa-base new=$B > $X/ab.log 2>&1
timeout 200 $B bench --variants $V --shapes $SHAPES --modes graph,graph-overlap --json $OUT/bench-mma.json > $X/bench.txt 2>&1
timeout 40 $B bench --variants $V --shapes 1,1,1,64 1,1,1,128 --modes graph >> $X/bench.txt 2>&1
timeout 40 $B bench --variants naive --shapes 2,8,256,64 1,8,512,64 4,16,2048,64 --json $OUT/bench-naive.json >> $X/bench.txt 2>&1
timeout 150 python3 scripts/peers.py $SHAPES > $OUT/peers.jsonl 2>> $OUT/device.txt
STEP_TIMEOUT=150 bash scripts/gpu-run.sh gate fuzz issue3 > $X/run.txt 2>&1
VARIANT=split-n64 PHASE_BIN=gpu-bundle-bug/sdpa-phase timeout 60 bash scripts/phase-clock.sh run "1,8,512,64 2,8,256,64 1,1,512,64" > $X/phase.txt 2>&1
rm -f $OUT/device.txt.bak
tar czf $OUT/extras.tgz -C $OUT extras && rm -rf $X
grep -A12 "^variant  shape" <(tar xzf $OUT/extras.tgz -O extras/ab.log)
python3 scripts/peers.py --summarize $OUT/peers.jsonl | grep -E "floor|cudnn" | head -4
tar xzf $OUT/extras.tgz -O extras/bench.txt | grep -E "^(split|split-n64) +(2,8,256,64|1,8,512,64) " | cut -c1-75
tar xzf $OUT/extras.tgz -O extras/bench.txt | grep -c FAIL
tar xzf $OUT/extras.tgz -O extras/run.txt | grep -E "passed|failed|FAIL|clean|hazard|ERROR" | tail -12
grep -A80 "deliberate bug" $OUT/issue3.log | grep -cE "Test failed"
tar xzf $OUT/extras.tgz -O extras/phase.txt | grep -vE "^\s*$" | head -40
