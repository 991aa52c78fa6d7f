#!/usr/bin/env bash
# Run 78: on top of caf5dd3/fd28486 (stage 51 kernels, gpu-bundle-diag/sdpa-base = gpu-bundle/bin/sdpa): stage 55 (skip the O
# rescale when no row max rose, warp vote: sdpa-vote) and stage 56 (warpgroups issue their products
# in turn over named barriers: sdpa-pingpong); same-run A/B each, 2 rounds.
set -uo pipefail
export OUT=${OUT:-gpu-out}
SH="1,8,512,64 8,16,512,64 4,16,1024,64 4,16,1024,128 4,16,2048,64 2,16,8192,64 2,16,8192,64,causal 4,16,4096,128 1,16,16384,128 1,16,16384,128,causal"
for x in vote pingpong; do
  mkdir -p "$OUT/$x"
  OUT="$OUT/$x" ROUNDS=2 bash scripts/ab-bench.sh gpu-bundle-diag/sdpa-base gpu-bundle-diag/sdpa-$x wgmma "$SH" graph > "$OUT/ab-$x.txt" 2>&1
done
(cd "$OUT" && tar cf ab.tar vote pingpong && rm -r vote pingpong)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > "$OUT/device.txt"
for x in vote pingpong; do echo "== $x (old = stage 51)"; grep -A20 "^variant  shape" "$OUT/ab-$x.txt"; grep -i "error" "$OUT/ab-$x.txt" | head -3; done
