#!/usr/bin/env bash
# Run 99 (H100): is run 98's split (1,8,512,64) 6.62 us (record 2026-11-25-3: 6.11) the build or the
# machine? split's SASS is identical to ad4ae0b's; same-run A/B of ad4ae0b's sdpa (sdpa-base) and this
# session's bundle, 3 rounds, split at the mission shapes and one key, graph mode.
set -uo pipefail
export OUT=${OUT:-gpu-out}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > "$OUT/device.txt"
OUT="$OUT" ROUNDS=3 bash scripts/ab-bench.sh gpu-bundle-diag/sdpa-base gpu-bundle/bin/sdpa split "2,8,256,64 1,8,512,64 1,1,1,64" graph > "$OUT/ab.txt" 2>&1
(cd "$OUT" && tar cf ab.tar ab-*.json && rm ab-*.json)
cat "$OUT/device.txt"; grep -v "^\[" "$OUT/ab.txt" | grep -E "^split|^variant|^== round"
