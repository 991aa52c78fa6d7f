#!/usr/bin/env python3
"""The table of a same-run A/B benchmark (scripts/ab-bench.sh): for each
(variant, shape, mode), the best median of the rounds per build, and
new/old. A row that failed its correctness check counts as infinitely slow.
    usage: scripts/ab-table.py DIR ROUNDS   (reads DIR/ab-{old,new}-<round>.json)
"""
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
