#!/usr/bin/env bash
# Where a `split` block's time goes (lab/STAGES.md stage 40): builds of
# the kernel that stop early, timed side by side. The outputs are wrong
# (the bench's check says FAIL); only the times count: the difference
# between two floors is what the part between them costs on the critical
# path.
#
#   here (builds, ~30 s each):  lab/scripts/floors.sh build
#       applies lab/patches/floors.patch, builds `sdpa` with FLOOR = 0..5 into
#       gpu-bundle-diag/floor-<n>, restores split.rs (lab/scripts/const-builds.sh
#       does the work)
#   on the GPU machine:         lab/scripts/floors.sh run ["SHAPES"]
#       (carry gpu-bundle-diag) times every build on SHAPES
#
# FLOOR: 0 the kernel; 1 exit after locating the block (zero output); 5 after
# Q has landed; 4 after Q and each group's first K/V stage; 2 after both
# prologue stages; 3 the prologue, then the merge (no key loop).
set -euo pipefail
cd "$(dirname "$0")/../.."
case ${1:-} in
  build) exec lab/scripts/const-builds.sh build lab/patches/floors.patch FLOOR floor "0 1 5 4 2 3" ;;
  run) exec lab/scripts/const-builds.sh run FLOOR floor "1 5 4 2 3 0" "${2:-1,1,1,64 1,1,256,64 2,8,256,64 1,8,512,64}" ;;
  *)
    echo "usage: lab/scripts/floors.sh build | run [\"SHAPES\"]" >&2
    exit 2 ;;
esac
