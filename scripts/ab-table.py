#!/usr/bin/env python3
"""The table of a same-run A/B benchmark (scripts/ab-bench.sh, or
scripts/ab-chain.sh for more than two builds): for each (variant, shape,
mode), the best median of the rounds per build, and each build's ratio to
the build before it (for two builds: new/old). A row that failed its
correctness check counts as infinitely slow, unless AB_TIMES_ONLY=1 (for
ablations, whose builds are wrong by design: then every row's time
counts, and a row that failed is marked with '!' after its time).
With three or more builds, each build after the second also gets its
ratio to the first (the chain's base), so a chain of experiments reads
against one reference as well as step by step. The last line says
whether every row of every build passed its correctness check (or lists
the ones that did not), so a run script need not check the JSON again.
    usage: scripts/ab-table.py DIR ROUNDS [TAG ...]
           (reads DIR/ab-<tag>-<round>.json; tags default to: old new)
"""
import json, os, sys
times_only = os.environ.get("AB_TIMES_ONLY") == "1"
out, rounds = sys.argv[1], int(sys.argv[2])
tags = sys.argv[3:] or ["old", "new"]
best = {}
incorrect = set()
for tag in tags:
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
            if not ok:
                incorrect.add((key, tag))
            t = row["median_us"] if ok or times_only else float("inf")
            best.setdefault(key, {})[tag] = min(t, best.get(key, {}).get(tag, float("inf")))
head = f'{"variant":8} {"shape":24} {"mode":14}' + "".join(f" {t + '_us':>10}" for t in tags)
head += "".join(f" {b + '/' + a:>12}" for a, b in zip(tags, tags[1:]))
head += "".join(f" {b + '/' + tags[0]:>12}" for b in tags[2:])
print(head)
for (v, shape, mode), t in best.items():
    times = [t.get(tag, float("nan")) for tag in tags]
    marks = ["!" if times_only and ((v, shape, mode), tag) in incorrect else " " for tag in tags]
    line = f"{v:8} {shape:24} {mode:14}" + "".join(f" {x:9.2f}{m}" for x, m in zip(times, marks))
    line += "".join(f" {b / a:12.3f}" for a, b in zip(times, times[1:]))
    line += "".join(f" {b / times[0]:12.3f}" for b in times[2:])
    print(line)
# Last, the correctness of every row read (each round, each build).
if incorrect:
    print(f"{len(incorrect)} (row, build) pairs failed their correctness check: "
          + ", ".join(f"{tag} {v} {shape} {mode}" for (v, shape, mode), tag in sorted(incorrect)))
else:
    print("every row of every build passed its correctness check")
