#!/usr/bin/env bash
# run 51: gate+fuzz with the new wgsplit variant; split vs wgsplit, same binary, 2 rounds
set -uo pipefail
export STEP_TIMEOUT=240
bash scripts/gpu-run.sh gate fuzz > $OUT/run.txt 2>&1
SH="1,1,1,64 2,8,256,64 1,8,512,64 1,8,512,64,causal 1,8,1024,64 4,16,2048,64 2,8,256,128 1,8,512,128"
for r in 1 2; do
  echo "== round $r" >> $OUT/run.txt
  timeout 240 gpu-bundle/bin/sdpa bench --variants split,wgsplit --shapes $SH --modes graph,graph-overlap --json $OUT/bench-$r.json 2>&1 | grep -v '^\[' >> $OUT/run.txt
done
grep -E "^(split|wgsplit) " $OUT/run.txt | sort -k2,2 -k3,3 -k1,1 -s
grep -E "test result|passed|failed|FAIL|panicked" $OUT/run.txt $OUT/gate.log $OUT/fuzz.log | tail -20
