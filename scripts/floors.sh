#!/usr/bin/env bash
# Where a `split` block's time goes (results/STAGES.md stage 40): builds of
# the kernel that stop early, timed side by side. The outputs are wrong
# (the bench's check says FAIL); only the times count: the difference
# between two floors is what the part between them costs on the critical
# path.
#
#   here (builds, ~30 s each):  scripts/floors.sh build
#       applies scripts/floors.patch, builds `sdpa` with FLOOR = 0..5 into
#       gpu-bundle-diag/floor-<n>, restores split.rs
#   on the GPU machine:         scripts/floors.sh run ["SHAPES"]
#       (carry gpu-bundle-diag) times every build on SHAPES
#
# FLOOR: 0 the kernel; 1 exit after locating the block (zero output); 5 after
# Q has landed; 4 after Q and each group's first K/V stage; 2 after both
# prologue stages; 3 the prologue, then the merge (no key loop).
set -euo pipefail
cd "$(dirname "$0")/.."
SPLIT=kernels-gpu/src/attention/split.rs
case ${1:-} in
  build)
    git diff --quiet -- "$SPLIT" || { echo "floors: $SPLIT has local changes" >&2; exit 2; }
    git apply scripts/floors.patch
    trap 'git checkout -- "$SPLIT"' EXIT
    mkdir -p gpu-bundle-diag
    for n in 0 1 5 4 2 3; do
      sed -i "s/^pub(crate) const FLOOR: u32 = [0-9];/pub(crate) const FLOOR: u32 = $n;/" "$SPLIT"
      echo "building FLOOR = $n ..."
      cargo build --release -q -p sdpa --bin sdpa
      cp target/release/sdpa "gpu-bundle-diag/floor-$n"
    done ;;
  run)
    SHAPES=${2:-"1,1,1,64 1,1,256,64 2,8,256,64 1,8,512,64"}
    for n in 1 5 4 2 3 0; do
      echo "== FLOOR $n"
      # shellcheck disable=SC2086
      "gpu-bundle-diag/floor-$n" bench --variants split --shapes $SHAPES --modes graph | grep "^split" || true
    done ;;
  *)
    echo "usage: scripts/floors.sh build | run [\"SHAPES\"]" >&2
    exit 2 ;;
esac
