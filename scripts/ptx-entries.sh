#!/usr/bin/env bash
# Prints each PTX entry of a kernels_gpu.ptx with the md5 and line count of
# its whole text (from its `.visible .entry` line to the next one), so two
# builds can be compared entry by entry: "byte-identical PTX" claims in
# lab/ and docs/ are made with it. (Cutting an entry at the first line that is
# a lone `}` stops inside it: inline `asm!` blocks end with such lines.)
#   usage: scripts/ptx-entries.sh [PTX]   (default: the newest sm_90a PTX
#          under target/release)
set -euo pipefail
ptx=${1:-$(ls -t target/release/build/sdpa/*/out/kernels-target/sm_90a/nvptx64-nvidia-cuda/release/kernels_gpu.ptx | head -1)}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
awk -v dir="$tmp" '
  /^\.visible \.entry / { name = $3; sub(/\(.*/, "", name); print name >> (dir "/order") }
  name { print > (dir "/" name) }
' "$ptx"
while read -r e; do
  printf '%-24s %s %6d lines\n' "$e" "$(md5sum < "$tmp/$e" | cut -c1-8)" "$(wc -l < "$tmp/$e")"
done < "$tmp/order"
