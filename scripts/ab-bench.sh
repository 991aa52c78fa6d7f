#!/usr/bin/env bash
# Same-run A/B benchmark of two `sdpa` builds on the GPU machine: the
# previous build (OLD, e.g. gpu-bundle-old/sdpa) and this one (NEW,
# gpu-bundle/bin/sdpa) take turns, ROUNDS times (default 2), on the same
# variants, shapes and modes, so drift over the run hits both alike.
# Writes $OUT/ab-{old,new}-<round>.json and prints a table of medians
# (the better of the rounds per build) with new/old ratios last.
# The two-build case of scripts/ab-chain.sh.
#   usage: scripts/ab-bench.sh OLD NEW VARIANTS "SHAPES" [MODES]
set -uo pipefail
exec bash "$(dirname "$0")/ab-chain.sh" "$3" "$4" "${5:-graph}" "old=$1" "new=$2"
