#!/usr/bin/env bash
# Run 96 (stage 67): kv_tiles through shared memory with bulk copies in and out (this tree, ed5861e),
# against
# ad4ae0b (sdpa-base), graph and graph-overlap; then the correctness gate, overlap and GPU fuzz.
set -uo pipefail
export OUT=${OUT:-gpu-out}
export STEP_TIMEOUT=240
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > "$OUT/device.txt"
mkdir -p "$OUT/ab"
OUT="$OUT/ab" ROUNDS=2 bash scripts/ab-bench.sh gpu-bundle-diag/sdpa-base gpu-bundle/bin/sdpa wgmma \
  "4,16,1024,64 4,16,2048,64 8,16,512,64 2,16,8192,64 2,16,8192,64,causal 4,16,1024,128 4,16,4096,128 1,16,16384,128 2,8,256,64 1,1,1,64 1,8,1000,64 2,4,777,128" graph,graph-overlap > "$OUT/ab.txt" 2>&1
(cd "$OUT" && tar cf ab.tar ab && rm -r ab)
bash scripts/gpu-run.sh gate fuzz > "$OUT/checks.txt" 2>&1
cat "$OUT/device.txt"; grep -E "passed|failed|FAIL|pairs checked" "$OUT/checks.txt" | tail -8
grep -v "^\[" "$OUT/ab.txt" | grep -vE "^== round|^ *$" | tail -25
