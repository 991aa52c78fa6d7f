#!/usr/bin/env bash
# Run 93 (diagnostic): what the kv_tiles prepass costs inside a benchmarked wgmma call. Three
# builds of ad4ae0b, graph mode, 2 rounds: the real one (base), one whose prepass returns at once
# (noprep), one whose attention kernel returns at once (noattn; prepass + an empty launch).
# The two diagnostic builds' results are wrong (their checks fail); only their times count.
set -uo pipefail
export OUT=${OUT:-gpu-out}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > "$OUT/device.txt"
S="4,16,1024,64 4,16,2048,64 8,16,512,64 2,16,8192,64 4,16,1024,128 4,16,4096,128 1,16,16384,128"
for r in 1 2; do for b in base noprep noattn; do
  echo "== round $r $b"
  timeout 200 gpu-bundle-diag/sdpa-$b bench --variants wgmma --shapes $S --modes graph 2>&1 | grep -E "^wgmma|^error"
done; done > "$OUT/prepass-share.txt"
cat "$OUT/device.txt" "$OUT/prepass-share.txt"
