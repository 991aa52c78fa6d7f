#!/usr/bin/env bash
# Run 107 (stage 76, go/no-go before a cluster key split): a chain of three
# split builds timed in turns, 2 rounds, graph mode:
#   base   = main 3bff275 (stage 71: 32 rows x 4 key groups of 2 warps, 32-key blocks)
#   r64mma = split D=64 as 64 rows x 2 key groups of 4 warps, 64-key blocks, mma.sync
#   wgqk   = r64mma with Q·K^T of each group on wgmma e4m3 from the swizzled TMA tiles
# (8,8,128,64) and (4,8,256,64) give 64-row blocks the work a two-block
# cluster splitting the keys would give each block at (2,8,256,64) and
# (1,8,512,64), on 128 blocks.
# Prediction (written before the run): r64mma, with half the blocks at the
# mission shapes, +25..40% there; wgqk against r64mma: one wgmma pair per
# 64-key step instead of K's ldmatrix, conversion and 16 chained HMMA per
# warp, ~0.1-0.2 us less per step: mission shapes -8..-15%, (8,8,128,64)
# -5..-8%, (4,8,256,64) -8..-12%. Go for the cluster key split if wgqk
# takes <= 3.1 us at (8,8,128,64) and <= 4.2 us at (4,8,256,64) (room for
# a ~0.3 us merge across the pair under base's 3.9 / 5.5 us); no-go else.
set -uo pipefail
export OUT=${OUT:-gpu-out} STEP_TIMEOUT=200
D=gpu-bundle-diag/r107
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > "$OUT/gpu.txt"
OUT="$OUT" ROUNDS=2 bash scripts/ab-chain.sh split \
  "2,8,256,64 1,8,512,64 1,1,1,64 8,8,128,64 4,8,256,64 2,8,200,64 1,8,512,64,causal 4,16,2048,64" graph \
  base=$D/sdpa-base r64mma=$D/sdpa-r64mma wgqk=$D/sdpa-wgqk > "$OUT/ab.txt" 2>&1
(cd "$OUT" && tar cf ab.tar ab-*.json && rm ab-*.json)
cat "$OUT/gpu.txt"
awk "/round 1: wgqk/,/round 2: base/" "$OUT/ab.txt" | grep "^split"
grep -v "^\[" "$OUT/ab.txt" | grep -vE "^== round|^ *$" | tail -12
