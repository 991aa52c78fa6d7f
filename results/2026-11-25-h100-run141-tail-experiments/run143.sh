#!/usr/bin/env bash
# Run 143: split-n64 D = 64 experiments against the build of 5989953
# (base): c4b (four chains as the entry's const parameter), ord (c4b +
# thread 0 issues the prologue copies stage by stage, K before V), sepx
# (c4b + exchange slots apart from the K/V tiles, no "done" barrier),
# ordsepx (both). Patches next to this script.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $OUT/gpu.txt
SHAPES="2,8,256,64 1,8,512,64 1,8,512,64,causal 1,1,1,64 4,8,512,64 1,8,1024,64 1,8,384,64 2,8,640,64"
mkdir -p $OUT/ab
B=gpu-bundle-diag/r143
OUT=$OUT/ab ROUNDS=5 STEP_TIMEOUT=200 bash scripts/ab-chain.sh split-n64 "$SHAPES" graph \
  base=$B/sdpa-base c4b=$B/sdpa-c4b ord=$B/sdpa-ord sepx=$B/sdpa-sepx ordsepx=$B/sdpa-ordsepx > $OUT/ab.log 2>&1
tar czf $OUT/ab-json.tgz -C $OUT ab && rm -rf $OUT/ab
grep -c " ok$" $OUT/ab.log; grep -c "FAIL" $OUT/ab.log
grep -A60 "^variant  shape" $OUT/ab.log
