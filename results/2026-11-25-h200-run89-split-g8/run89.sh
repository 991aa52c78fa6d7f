#!/usr/bin/env bash
# Run 89 (stage 63): split D=64 with 8 key groups (sdpa-g8) against the 4-group build of ad4ae0b
# (sdpa-base), and the merge refactor with 4 groups (sdpa-new, 2870854) against the same base.
set -uo pipefail
export OUT=${OUT:-gpu-out}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > "$OUT/device.txt"
mkdir -p "$OUT/g8" "$OUT/new"
OUT="$OUT/g8" ROUNDS=2 bash scripts/ab-bench.sh gpu-bundle-diag/sdpa-base gpu-bundle-diag/sdpa-g8 split \
  "2,8,256,64 1,8,512,64 1,1,1,64 1,1,256,64 1,8,1024,64 4,8,512,64 2,8,200,64 1,8,512,64,causal" graph > "$OUT/ab-g8.txt" 2>&1
OUT="$OUT/new" ROUNDS=2 bash scripts/ab-bench.sh gpu-bundle-diag/sdpa-base gpu-bundle-diag/sdpa-new split \
  "2,8,256,64 1,8,512,64 2,8,256,128 1,8,512,128 1,1,1,128" graph > "$OUT/ab-new.txt" 2>&1
(cd "$OUT" && tar cf ab.tar g8 new && rm -r g8 new)
cat "$OUT/device.txt"
for f in ab-g8 ab-new; do echo "== $f"; grep -v "^\[" "$OUT/$f.txt" | grep -vE "^== round|^ *$" | tail -14; done
