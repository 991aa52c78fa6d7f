#!/usr/bin/env bash
# Same-run benchmark of a chain of `sdpa` builds on the GPU machine (each
# stage's build after the one before it): the builds take turns, ROUNDS
# times (default 2), on the same variants, shapes and modes, so drift over
# the run hits all alike. Writes $OUT/ab-<tag>-<round>.json and prints the
# table of best medians with each build's ratio to the one before it
# (scripts/ab-table.py; AB_TIMES_ONLY=1 keeps the times of rows that fail
# their check: ablation builds, wrong by design). scripts/ab-bench.sh is the
# two-build case.
#   usage: scripts/ab-chain.sh VARIANTS "SHAPES" MODES TAG=SDPA TAG=SDPA [...]
set -uo pipefail
VARIANTS=$1 SHAPES=$2 MODES=$3
shift 3
OUT=${OUT:-gpu-out}
ROUNDS=${ROUNDS:-2}
T=${STEP_TIMEOUT:-240}
mkdir -p "$OUT"
tags=()
for build in "$@"; do tags+=("${build%%=*}"); done
status=0
for r in $(seq 1 "$ROUNDS"); do
  for build in "$@"; do
    tag=${build%%=*} bin=${build#*=}
    echo "== round $r: $tag ($bin)"
    # shellcheck disable=SC2086
    timeout "$T" "$bin" bench --variants "$VARIANTS" --shapes $SHAPES --modes "$MODES" \
      --json "$OUT/ab-$tag-$r.json" | grep -v '^\[' || status=1
  done
done
python3 "$(dirname "$0")/ab-table.py" "$OUT" "$ROUNDS" "${tags[@]}"
exit $status
