#!/usr/bin/env bash
# Run 75: on top of stage 51 (c764a36, gpu-bundle/bin/sdpa): K/Vt 6 deep at D=64 and 5 at D=128
# (sdpa-stages), and a producer warp issuing the copies (sdpa-producer); same-run A/B each.
set -uo pipefail
export OUT=${OUT:-gpu-out}
SH="1,8,512,64 8,16,256,64 4,16,1024,64 4,16,1024,128 4,16,2048,64 2,16,8192,64 2,16,8192,64,causal 4,16,4096,128 1,16,16384,128 1,16,16384,128,causal"
for x in stages producer; do
  mkdir -p "$OUT/$x"
  OUT="$OUT/$x" ROUNDS=2 bash scripts/ab-bench.sh gpu-bundle/bin/sdpa gpu-bundle-diag/sdpa-$x wgmma "$SH" graph > "$OUT/ab-$x.txt" 2>&1
done
(cd "$OUT" && tar cf ab.tar stages producer && rm -r stages producer)
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > "$OUT/device.txt"
for x in stages producer; do echo "== $x (old = stage 51)"; grep -A20 "^variant  shape" "$OUT/ab-$x.txt"; done
