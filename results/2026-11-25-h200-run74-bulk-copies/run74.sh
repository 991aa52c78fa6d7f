#!/usr/bin/env bash
# Run 74: stage 51 (wgmma fed by bulk copies) - correctness, then A/B vs 90309ab.
set -uo pipefail
export OUT=${OUT:-gpu-out}
STEP_TIMEOUT=300 bash scripts/gpu-run.sh gate fuzz > "$OUT/run.log" 2>&1
tail -8 "$OUT/run.log"
grep -E "test result|FAIL|panicked" "$OUT/gate.log" | head -10
SH="2,8,256,64 1,8,512,64 8,16,256,64 4,16,1024,64 4,16,1024,128 4,16,2048,64 2,16,8192,64 2,16,8192,64,causal 4,16,4096,128 1,16,16384,128 1,16,16384,128,causal"
ROUNDS=2 bash scripts/ab-bench.sh gpu-bundle-old/sdpa gpu-bundle/bin/sdpa wgmma "$SH" graph > "$OUT/ab.txt" 2>&1
(cd "$OUT" && tar cf ab.tar ab-*.json && rm ab-*.json)
cat "$OUT/ab.txt" | grep -v "^\[" | tail -30
