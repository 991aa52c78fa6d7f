#!/usr/bin/env bash
# Run 109 (stage 77): a chain of three split builds timed in turns, 2 rounds, graph mode:
#   base = 3bff275 (stage 71's kernels), wgqk = stage 76 (64 rows x 2 warpgroup
#   key groups, Q·K^T on wgmma), wg4 = wgqk with 4 warpgroup key groups (16
#   warps, 512 threads, .maxntid 512: 128 registers, 36 bytes spilled).
# Prediction (written before the run): at the mission shapes each group of
# wg4 takes half of wgqk's steps (1 at (2,8,256,64), 2 at (1,8,512,64)) on
# 64 blocks of 16 warps, against a wider merge (4 groups) and 2x the warps
# per scheduler: (2,8,256,64) 3.5-3.9 us, (1,8,512,64) 4.5-5.2 us (wgqk
# 4.12 / 6.34 and base 3.87 / 5.74 on the H100 of run 107), (1,1,1,64)
# 2.8-3.0 us. Go (a 64-row split entry for the mission shapes) if wg4 is
# under base at both mission shapes; the 5 us target at (1,8,512,64) if <= 5.0.
set -uo pipefail
export OUT=${OUT:-gpu-out} STEP_TIMEOUT=200
D=gpu-bundle-diag/r109
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > "$OUT/gpu.txt"
OUT="$OUT" ROUNDS=2 bash scripts/ab-chain.sh split \
  "2,8,256,64 1,8,512,64 1,1,1,64 2,8,200,64 1,8,512,64,causal 1,8,1024,64 4,8,256,64" graph \
  base=$D/sdpa-base wgqk=$D/sdpa-wgqk wg4=$D/sdpa-wg4 > "$OUT/ab.txt" 2>&1
(cd "$OUT" && tar cf ab.tar ab-*.json && rm ab-*.json)
cat "$OUT/gpu.txt"
awk "/round 1: wg4/,/round 2: base/" "$OUT/ab.txt" | grep -E "^split|error|Error"
grep -v "^\[" "$OUT/ab.txt" | grep -vE "^== round|^ *$" | tail -9
