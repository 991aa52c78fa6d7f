#!/usr/bin/env bash
# Run 105 (H100): stage 74 (gpu-bundle, 52f28a3 + the refit) against stage 71's build
# (gpu-bundle-diag/r103/sdpa-s71, d099abc), 2 rounds, graph; gate + overlap + GPU fuzz on the
# stage-74 bundle; then the H100 record of stage 71's build: the 8 issue shapes (graph,
# graph-overlap), the 1-key floor, the 12 shapes of results/2026-11-25-predictions-run105.md,
# torch peers.
set -uo pipefail
export STEP_TIMEOUT=240
OUT=${OUT:-gpu-out}
mkdir -p "$OUT"
OUT="$OUT" ROUNDS=2 bash scripts/ab-chain.sh split \
  "2,8,256,64 1,8,512,64 1,1,1,64 1,1,256,64 1,8,1024,64 4,8,512,64 2,8,200,64 1,8,512,64,causal 2,8,256,128 1,8,512,128 1,4,1024,128 4,16,2048,64" graph \
  s71=gpu-bundle-diag/r103/sdpa-s71 s74=gpu-bundle/bin/sdpa > "$OUT/ab.txt" 2>&1
(cd "$OUT" && tar cf ab.tar ab-*.json && rm ab-*.json)
bash scripts/gpu-run.sh gate fuzz > /tmp/run.txt 2>&1
(cd "$OUT" && tar cf checks.tar gate.log fuzz.log && rm gate.log fuzz.log)
SHAPES="2,8,256,64 1,8,512,64 4,16,2048,64 2,16,8192,64 2,16,8192,64,causal 4,16,4096,128 1,16,16384,128 1,16,16384,128,causal"
PRED="1,4,1536,64 1,2,2048,64 2,2,2048,64 1,4,3072,64 1,6,2048,64 1,8,4096,64,causal 1,4,4096,64,causal 1,4,3072,64,causal 1,4,2048,128,causal 1,4,2048,128 1,4,1536,128,causal 1,6,2048,128,causal"
B=gpu-bundle-diag/r103/sdpa-s71
timeout 300 $B bench --variants mma,wgmma,split --shapes $SHAPES --modes graph,graph-overlap --json $OUT/bench-mma.json > $OUT/bench.txt 2>&1
timeout 60 $B bench --variants mma,wgmma,split --shapes 1,1,1,64 --modes graph >> $OUT/bench.txt 2>&1
timeout 240 $B bench --variants mma,wgmma,split --shapes $PRED --modes graph --json $OUT/crossover.json >> $OUT/bench.txt 2>&1
timeout 240 python3 scripts/peers.py $SHAPES > $OUT/peers.jsonl 2>> $OUT/device.txt
grep -E "passed|failed|FAIL|pairs checked" /tmp/run.txt | tail -6
grep -v '^\[' $OUT/bench.txt | grep -E "graph" | awk '{print $1, $2, $3, $4}' | head -90
python3 scripts/peers.py --summarize $OUT/peers.jsonl | grep -E "floor|cudnn"
grep -v "^\[" "$OUT/ab.txt" | grep -vE "^== round|^ *$" | tail -13
