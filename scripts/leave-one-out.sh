#!/usr/bin/env bash
# Leave-one-out diagnostic of `split` (results/STAGES.md stage 25): builds
# of the kernel that each leave one part out of the key loop or the merge,
# timed side by side. The outputs are wrong (the bench's check says FAIL);
# only the times count: what a part costs on the critical path is about
# what leaving it out saves.
#
#   here (builds, ~1 min each):  scripts/leave-one-out.sh build
#       applies scripts/leave-one-out.patch, builds `sdpa` with LEAVE_OUT =
#       0..7 into gpu-bundle-diag/sdpa-<n>, restores split.rs and warp_tile.rs
#   on the GPU machine:          scripts/leave-one-out.sh run ["SHAPES"]
#       (carry gpu-bundle-diag) times every build on SHAPES, 0 first and last
#
# (Builds 1..7 fail their check, so the bench exits non-zero; the loop goes on.)
# LEAVE_OUT: 0 nothing, 1 P·V, 2 the softmax, 3 Q·K, 4 the per-step data
# wait, 5 the refills and the data wait, 6 the merge, 7 the E4M3 -> f16
# conversions of K (sm_90; `warp_tile` too, so `mma` as well) and V.
set -euo pipefail
cd "$(dirname "$0")/.."
SPLIT=kernels-gpu/src/attention/split.rs
WARP_TILE=kernels-gpu/src/attention/warp_tile.rs
case ${1:-} in
  build)
    git diff --quiet -- "$SPLIT" "$WARP_TILE" || { echo "leave-one-out: $SPLIT or $WARP_TILE has local changes" >&2; exit 2; }
    git apply scripts/leave-one-out.patch
    trap 'git checkout -- "$SPLIT" "$WARP_TILE"' EXIT
    mkdir -p gpu-bundle-diag
    for n in 0 1 2 3 4 5 6 7; do
      sed -i "s/^pub(crate) const LEAVE_OUT: u32 = [0-9];/pub(crate) const LEAVE_OUT: u32 = $n;/" "$SPLIT"
      echo "building LEAVE_OUT = $n ..."
      cargo build --release -q -p sdpa --bin sdpa
      cp target/release/sdpa "gpu-bundle-diag/sdpa-$n"
    done ;;
  run)
    SHAPES=${2:-"1,1,1,64 1,1,256,64 1,1,512,64 2,8,256,64 1,8,512,64"}
    for n in 0 1 2 3 4 5 6 7 0; do
      echo "== LEAVE_OUT $n"
      # shellcheck disable=SC2086
      "gpu-bundle-diag/sdpa-$n" bench --variants split --shapes $SHAPES --modes graph | grep "^split" || true
    done ;;
  *)
    echo "usage: scripts/leave-one-out.sh build | run [\"SHAPES\"]" >&2
    exit 2 ;;
esac
