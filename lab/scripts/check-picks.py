#!/usr/bin/env python3
"""Checks the library's recommendation against `sdpa bench --json` runs that
timed every variant, and prints the measured-winners table of
host/tests/kernels.rs.

Each shape (up to 2048 keys, graph mode) is taken from the last file that
timed it; its winners are the variants within 2% of the fastest there,
fastest first. The recommendation is `sdpa plan`'s pick (the cost model of
kernels-gpu/src/cost.rs, built into the `sdpa` given). Prints one line per
file (right / shapes, and each miss: shape, pick / fastest, how far behind),
then the whole-set total and the misses.

    usage: lab/scripts/check-picks.py [--sdpa PATH] [--rust] BENCH.json [...]
      --sdpa PATH   the sdpa CLI to ask (default target/release/sdpa)
      --rust        also print MEASURED_WINNERS and KNOWN_MISSES as Rust
e.g. lab/scripts/check-picks.py RUNS/2026-11-25-h100-run1{16,17,20,21}*/*.json
where RUNS holds the run folders restored from git history
(lab/README.md: `git archive c9d53eb results | tar x`).
"""
import json
import subprocess
import sys

RUST_NAMES = {"mma": "Mma", "wgmma": "Wgmma", "split": "Split", "split-wg": "SplitWg", "split-n64": "SplitN64"}
MAX_KEYS = 2048


def shape_name(s):
    return f'{s["batch"]},{s["heads"]},{s["seq"]},{s["head_dim"]}' + (",causal" if s["causal"] else "")


def timings(path):
    """{shape: {variant: median us}} of one file (inf where the check failed)."""
    t = {}
    for r in json.load(open(path))["rows"]:
        if r["mode"] != "graph" or r["variant"] not in RUST_NAMES or r["shape"]["seq"] > MAX_KEYS:
            continue
        t.setdefault(shape_name(r["shape"]), {})[r["variant"]] = r["median_us"] if r["correct"] else float("inf")
    return t


def picks(sdpa, shapes):
    out = subprocess.run([sdpa, "plan", "--shapes", *shapes], capture_output=True, text=True, check=True).stdout
    return {f[0]: f[6] for f in (line.split() for line in out.splitlines()) if f and f[0] in shapes}


def winners(v):
    best = min(v.values())
    return sorted((x for x in v if v[x] <= 1.02 * best), key=v.get)


def main(argv):
    sdpa, rust = "target/release/sdpa", False
    if "--sdpa" in argv:
        i = argv.index("--sdpa")
        sdpa = argv[i + 1]
        del argv[i : i + 2]
    if "--rust" in argv:
        argv.remove("--rust")
        rust = True
    if not argv:
        sys.exit(__doc__)
    latest, order = {}, []
    for path in argv:
        t = timings(path)
        chosen = picks(sdpa, list(t))
        misses = []
        for shape, v in t.items():
            if chosen[shape] not in v:
                misses.append(f"{shape}: {chosen[shape]} not timed")
            elif chosen[shape] not in winners(v):
                misses.append(f"{shape}: {chosen[shape]} / {min(v, key=v.get)} {v[chosen[shape]] / min(v.values()):.3f}")
            if shape not in latest:
                order.append(shape)
            latest[shape] = (path, v)
        print(f"{path}: {len(t) - len(misses)} / {len(t)}" + "".join(f"\n  miss {m}" for m in misses))
    chosen = picks(sdpa, order)
    missed = [s for s in order if chosen[s] not in winners(latest[s][1])]
    print(f"all: {len(order) - len(missed)} / {len(order)} right; misses: {' '.join(missed)}")
    if rust:
        print(f"const MEASURED_WINNERS: [(&str, &[Variant]); {len(order)}] = [")
        for path in dict.fromkeys(p for p, _ in latest.values()):
            print(f"    // {path}")
            for s in order:
                if latest[s][0] == path:
                    names = ", ".join(f"Variant::{RUST_NAMES[x]}" for x in winners(latest[s][1]))
                    print(f'    ("{s}", &[{names}]),')
        print("];")
        print(f"const KNOWN_MISSES: [&str; {len(missed)}] = [{', '.join(repr(s).replace(chr(39), chr(34)) for s in missed)}];")


if __name__ == "__main__":
    main(sys.argv[1:])
