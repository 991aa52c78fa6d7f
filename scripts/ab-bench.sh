#!/usr/bin/env bash
# Same-run A/B benchmark of two `sdpa` builds on the GPU machine: the
# previous build (OLD, e.g. gpu-bundle-old/sdpa) and this one (NEW,
# gpu-bundle/bin/sdpa) take turns, ROUNDS times (default 2), on the same
# variants, shapes and modes, so drift over the run hits both alike.
# Writes $OUT/ab-{old,new}-<round>.json and prints a table of medians
# (the better of the rounds per build) with new/old ratios last.
#   usage: scripts/ab-bench.sh OLD NEW VARIANTS "SHAPES" [MODES]
set -uo pipefail
OLD=$1 NEW=$2 VARIANTS=$3 SHAPES=$4 MODES=${5:-graph}
OUT=${OUT:-gpu-out}
ROUNDS=${ROUNDS:-2}
T=${STEP_TIMEOUT:-240}
mkdir -p "$OUT"
status=0
for r in $(seq 1 "$ROUNDS"); do
  for tag in old new; do
    bin=$OLD; [ "$tag" = new ] && bin=$NEW
    echo "== round $r: $tag ($bin)"
    # shellcheck disable=SC2086
    timeout "$T" "$bin" bench --variants "$VARIANTS" --shapes $SHAPES --modes "$MODES" \
      --json "$OUT/ab-$tag-$r.json" | grep -v '^\[' || status=1
  done
done
python3 "$(dirname "$0")/ab-table.py" "$OUT" "$ROUNDS"
exit $status
