#!/usr/bin/env bash
# Prints each PTX entry of a kernels_gpu.ptx with the md5 and line count of
# its whole text (from its `.visible .entry` line to the next one), so two
# builds can be compared entry by entry: "byte-identical PTX" claims in
# lab/ and docs/ are made with it. (Cutting an entry at the first line that is
# a lone `}` stops inside it: inline `asm!` blocks end with such lines.)
#   usage: scripts/ptx-entries.sh [--normalised] [PTX]   (default: the newest
#          sm_90a PTX under target/release)
# --normalised masks what renumbers when other entries come or go or code
# moves between functions without changing: virtual register numbers,
# block labels, anonymous global symbols and comments (so entries equal
# "up to numbering" hash the same).
set -euo pipefail
normalise=cat
if [ "${1:-}" = --normalised ]; then
  normalise="sed -E s/%[a-z]+[0-9]+/%R/g;s/[$]L__BB[0-9]+_[0-9]+/LBL/g;s/anon_[$]_[0-9a-f]+_[$]_[0-9]+/ANON/g;s@[[:space:]]*//.*@@"
  shift
fi
ptx=${1:-$(ls -t target/release/build/sdpa/*/out/kernels-target/sm_90a/nvptx64-nvidia-cuda/release/kernels_gpu.ptx | head -1)}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
awk -v dir="$tmp" '
  /^\.visible \.entry / { name = $3; sub(/\(.*/, "", name); print name >> (dir "/order") }
  name { print > (dir "/" name) }
' "$ptx"
while read -r e; do
  printf '%-24s %s %6d lines\n' "$e" "$($normalise < "$tmp/$e" | md5sum | cut -c1-8)" "$(wc -l < "$tmp/$e")"
done < "$tmp/order"
