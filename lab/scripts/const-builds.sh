#!/usr/bin/env bash
# Diagnostic builds of `sdpa` that differ in one constant, timed side by
# side on the GPU: the engine behind lab/scripts/leave-one-out.sh and
# lab/scripts/floors.sh. A patch adds `pub(crate) const NAME: u32 = 0;` to a
# kernel file and branches on it; each build sets NAME to one value.
#
#   here:     lab/scripts/const-builds.sh build PATCH NAME PREFIX "VALUES"
#       applies PATCH, builds `sdpa` once per value into
#       gpu-bundle-diag/PREFIX-<value>, then restores the patched files
#   on GPU:   lab/scripts/const-builds.sh run NAME PREFIX "VALUES" "SHAPES" [VARIANT]
#       (carry gpu-bundle-diag) times VARIANT (default split) with every
#       build in the order of VALUES; builds whose results are wrong fail
#       their check and the bench exits non-zero, so the loop goes on.
set -euo pipefail
cd "$(dirname "$0")/../.."
case ${1:-} in
  build)
    [ $# -eq 5 ] || { echo "usage: $0 build PATCH NAME PREFIX \"VALUES\"" >&2; exit 2; }
    patch=$2 name=$3 prefix=$4 values=$5
    mapfile -t files < <(git apply --numstat "$patch" | cut -f3)
    git diff --quiet -- "${files[@]}" || { echo "$0: ${files[*]} have local changes" >&2; exit 2; }
    git apply "$patch"
    trap 'git checkout -- "${files[@]}"' EXIT
    mkdir -p gpu-bundle-diag
    for n in $values; do
      sed -i "s/^pub(crate) const $name: u32 = [0-9]*;/pub(crate) const $name: u32 = $n;/" "${files[@]}"
      echo "building $name = $n ..."
      cargo build --release -q -p sdpa --bin sdpa
      cp target/release/sdpa "gpu-bundle-diag/$prefix-$n"
    done ;;
  run)
    [ $# -ge 5 ] || { echo "usage: $0 run NAME PREFIX \"VALUES\" \"SHAPES\" [VARIANT]" >&2; exit 2; }
    name=$2 prefix=$3 values=$4 shapes=$5 variant=${6:-split}
    for n in $values; do
      echo "== $name $n"
      # shellcheck disable=SC2086
      "gpu-bundle-diag/$prefix-$n" bench --variants "$variant" --shapes $shapes --modes graph | grep "^$variant " || true
    done ;;
  *)
    echo "usage: $0 build PATCH NAME PREFIX \"VALUES\" | run NAME PREFIX \"VALUES\" \"SHAPES\" [VARIANT]" >&2
    exit 2 ;;
esac
