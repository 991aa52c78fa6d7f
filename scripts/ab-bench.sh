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
python3 - "$OUT" "$ROUNDS" <<'EOF'
import json, sys
out, rounds = sys.argv[1], int(sys.argv[2])
best = {}
for tag in ("old", "new"):
    for r in range(1, rounds + 1):
        try:
            rows = json.load(open(f"{out}/ab-{tag}-{r}.json"))["rows"]
        except (OSError, ValueError):
            continue
        for row in rows:
            s = row["shape"]
            shape = f'{s["batch"]},{s["heads"]},{s["seq"]},{s["head_dim"]}' + (",causal" if s["causal"] else "")
            key = (row["variant"], shape, row["mode"])
            ok = row["correct"]
            t = row["median_us"] if ok else float("inf")
            best.setdefault(key, {})[tag] = min(t, best.get(key, {}).get(tag, float("inf")))
print(f'{"variant":8} {"shape":24} {"mode":14} {"old_us":>10} {"new_us":>10} {"new/old":>8}')
for (v, shape, mode), t in best.items():
    o, n = t.get("old", float("nan")), t.get("new", float("nan"))
    print(f"{v:8} {shape:24} {mode:14} {o:10.2f} {n:10.2f} {n / o:8.3f}")
EOF
exit $status
