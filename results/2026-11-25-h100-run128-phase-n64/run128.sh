#!/usr/bin/env bash
# Run 128 (diagnostic): the phase clock (scripts/phase-clock.sh's build,
# gpu-bundle-diag/sdpa-phase) of split and split-n64 at the mission shapes
# and at (1,1,512,64) (16 blocks: no L2 contention).
set -uo pipefail
tmp=$(mktemp -d)
for s in 1,8,512,64 1,1,512,64 2,8,256,64; do
  python3 scripts/phase-clock.py input "$s" "$tmp/in.safetensors"
  for v in split split-n64; do
    echo "== $v $s"
    gpu-bundle-diag/sdpa-phase run --variant $v -i "$tmp/in.safetensors" -o "$tmp/out.safetensors" | grep "^phase clock"
    python3 scripts/phase-clock.py report "$s" "$tmp/out.safetensors"
  done
done
