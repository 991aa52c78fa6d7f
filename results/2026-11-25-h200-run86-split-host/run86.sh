#!/usr/bin/env bash
# Run 86: split's slowdown (run 85: this session's sdpa +3..5% ordered, +19..26% overlapped against
# 90309ab's, with the same split PTX): is it where Q, K, V land? sdpa-lazyalloc allocates the kv_tiles
# scratch only for kernels with a prepass (split gets none; 90309ab allocated a Vt scratch first for all).
set -uo pipefail
export OUT=${OUT:-gpu-out}
OUT="$OUT" ROUNDS=2 bash scripts/ab-bench.sh gpu-bundle-old/sdpa gpu-bundle-diag/sdpa-lazyalloc split,mma "2,8,256,64 1,8,512,64 1,1,1,64" graph,graph-overlap > "$OUT/ab.txt" 2>&1
(cd "$OUT" && tar cf ab.tar ab-*.json && rm ab-*.json)
grep -A14 "^variant  shape" "$OUT/ab.txt"
