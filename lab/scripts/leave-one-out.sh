#!/usr/bin/env bash
# Leave-one-out diagnostic of `split` (lab/STAGES.md stage 25): builds
# of the kernel that each leave one part out of the key loop or the merge,
# timed side by side. The outputs are wrong (the bench's check says FAIL);
# only the times count: what a part costs on the critical path is about
# what leaving it out saves.
#
#   here (builds, ~30 s each):   lab/scripts/leave-one-out.sh build
#       applies lab/patches/leave-one-out.patch, builds `sdpa` with LEAVE_OUT =
#       0..7 into gpu-bundle-diag/sdpa-<n>, restores split.rs and warp_tile.rs
#       (lab/scripts/const-builds.sh does the work)
#   on the GPU machine:          lab/scripts/leave-one-out.sh run ["SHAPES"]
#       (carry gpu-bundle-diag) times every build on SHAPES, 0 first and last
#
# LEAVE_OUT: 0 nothing, 1 P·V, 2 the softmax, 3 Q·K, 4 the per-step data
# wait, 5 the refills and the data wait, 6 the merge, 7 the E4M3 -> f16
# conversions of K (sm_90; `warp_tile` too, so `mma` as well) and V.
set -euo pipefail
cd "$(dirname "$0")/../.."
case ${1:-} in
  build) exec lab/scripts/const-builds.sh build lab/patches/leave-one-out.patch LEAVE_OUT sdpa "0 1 2 3 4 5 6 7" ;;
  run) exec lab/scripts/const-builds.sh run LEAVE_OUT sdpa "0 1 2 3 4 5 6 7 0" \
    "${2:-1,1,1,64 1,1,256,64 1,1,512,64 2,8,256,64 1,8,512,64}" ;;
  *)
    echo "usage: lab/scripts/leave-one-out.sh build | run [\"SHAPES\"]" >&2
    exit 2 ;;
esac
