#!/usr/bin/env bash
# Run 85: is split's graph-overlap slowdown (record -14: 3.84 / 5.55 us; runs 76, 81: ~4.6 / ~7.1) the
# host build or the machine? The 90309ab sdpa (gpu-bundle-old) and this session's (sdpa-base, 4b671ed)
# alternate, 3 rounds, split only, graph and graph-overlap.
set -uo pipefail
export OUT=${OUT:-gpu-out}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > "$OUT/device.txt"
OUT="$OUT" ROUNDS=3 bash scripts/ab-bench.sh gpu-bundle-old/sdpa gpu-bundle-diag/sdpa-base split "2,8,256,64 1,8,512,64 1,1,1,64" graph,graph-overlap > "$OUT/ab.txt" 2>&1
(cd "$OUT" && tar cf ab.tar ab-*.json && rm ab-*.json)
grep -v "^\[" "$OUT/ab.txt" | grep -E "^split|^==" | head -40
