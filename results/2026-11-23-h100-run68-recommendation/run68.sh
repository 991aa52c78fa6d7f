#!/usr/bin/env bash
# run 68 (H100): out-of-sample check of the refitted kernels::recommended (22 shapes up to 2048 keys),
# the mission shapes in both modes, the 1-key floor, the correctness gate, torch peers at the mission shapes.
set -uo pipefail
B=gpu-bundle/bin
{ $B/sdpa info | tail -2; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; } > $OUT/device.txt 2>&1
timeout 100 $B/gpu_gate --ignored --nocapture --test-threads=1 > $OUT/gate.log 2>&1; echo "gate rc=$?"; grep -E "passed, .* failed" $OUT/gate.log
SH="1,8,512,64 1,8,1024,64 1,8,1536,64 1,8,2048,64 4,16,1024,64 4,16,2048,64 1,8,512,128 1,8,1024,128 1,8,2048,128 4,16,1024,128 1,8,1024,64,causal 1,8,2048,64,causal 2,16,1024,64 1,16,1024,64 1,12,1024,64 2,8,2048,64,causal 1,8,2048,128,causal 1,4,2048,64 1,8,1536,128 2,4,512,64 8,16,256,64 2,8,256,64"
timeout 240 $B/sdpa bench --variants mma,wgmma,split --shapes $SH --modes graph --json $OUT/h100-crossover.json > $OUT/bench.txt 2>&1
timeout 60 $B/sdpa bench --variants split --shapes 2,8,256,64 1,8,512,64 --modes graph,graph-overlap --json $OUT/h100-mission.json >> $OUT/bench.txt 2>&1
timeout 60 $B/sdpa bench --variants mma,split --shapes 1,1,1,64 --modes graph >> $OUT/bench.txt 2>&1
timeout 120 python3 scripts/peers.py 2,8,256,64 1,8,512,64 > $OUT/peers.jsonl 2>> $OUT/device.txt
grep -v '^\[' $OUT/bench.txt | grep -E "split|mma|wgmma"
python3 scripts/peers.py --summarize $OUT/peers.jsonl
