#!/usr/bin/env python3
"""Fits one kernel's cost-model coefficients (kernels-gpu/src/cost.rs) to
`sdpa bench --json` timings, and prints them with each shape's error.

The model (cost.rs): time_us = fixed + per_kilokey x seq_kv x load / 1e3
+ per_mega_element x (B x H x seq_kv x D) / 1e6, where load is the busiest
SM's rounds of blocks (`cost::load`, TWO_BLOCKS_COST = 0.44) and causal
masking halves the blocks. The fit is least squares of the relative error
(each row divided by its measured time), solved by its normal equations,
over the rows of 128-2048 keys (the model's range).

    usage: lab/scripts/fit-cost.py VARIANT HEAD_DIM BLOCK_M BLOCKS_PER_SM BENCH.json [...]
           [--sms 132]
e.g. lab/scripts/fit-cost.py split-n64 64 32 1 RUNS/2026-11-25-h100-run124-split-n64-fit/fit.json
where RUNS holds the run folders restored from git history
(lab/README.md: `git archive c9d53eb results | tar x`).
"""
import json
import sys

TWO_BLOCKS_COST = 0.44
# The keys the model serves (cost::MODEL_MIN_KEYS ..= cost::MODEL_MAX_KEYS):
# rows outside are left out of the fit.
MODEL_MIN_KEYS, MODEL_MAX_KEYS = 128, 2048


def load(blocks, sms, per_sm):
    on_busiest = -(-blocks // sms)
    full, rest = divmod(on_busiest, per_sm)
    rnd = lambda n: 1.0 + TWO_BLOCKS_COST * (n - 1)
    return full * rnd(per_sm) + (rnd(rest) if rest else 0.0)


def features(shape, block_m, per_sm, sms):
    b, h, s, d, causal = shape["batch"], shape["heads"], shape["seq"], shape["head_dim"], shape["causal"]
    blocks = b * h * -(-s // block_m)
    if causal:
        blocks = -(-blocks // 2)
    return [1.0, s * load(blocks, sms, per_sm) / 1e3, b * h * s * d / 1e6]


def solve(a, y):
    """Least squares by the normal equations and Gaussian elimination."""
    n = len(a[0])
    m = [[sum(r[i] * r[j] for r in a) for j in range(n)] + [sum(r[i] * v for r, v in zip(a, y))] for i in range(n)]
    for c in range(n):
        p = max(range(c, n), key=lambda r: abs(m[r][c]))
        m[c], m[p] = m[p], m[c]
        for r in range(n):
            if r != c:
                f = m[r][c] / m[c][c]
                m[r] = [x - f * z for x, z in zip(m[r], m[c])]
    return [m[i][n] / m[i][i] for i in range(n)]


def main(argv):
    sms = 132
    if "--sms" in argv:
        i = argv.index("--sms")
        sms = int(argv[i + 1])
        del argv[i : i + 2]
    if len(argv) < 5:
        sys.exit(__doc__)
    variant, head_dim, block_m, per_sm = argv[0], int(argv[1]), int(argv[2]), int(argv[3])
    rows = []
    for path in argv[4:]:
        for r in json.load(open(path))["rows"]:
            keys_in_range = MODEL_MIN_KEYS <= r["shape"]["seq"] <= MODEL_MAX_KEYS
            if r["variant"] == variant and r["shape"]["head_dim"] == head_dim and r["correct"] and r["mode"] == "graph" and keys_in_range:
                rows.append((r["shape"], r["median_us"]))
    if len(rows) < 3:
        sys.exit(f"{len(rows)} rows of {variant} at D = {head_dim}: too few to fit 3 coefficients")
    x = [features(s, block_m, per_sm, sms) for s, _ in rows]
    a = [[v / t for v in f] for f, (_, t) in zip(x, rows)]
    coef = solve(a, [1.0] * len(rows))
    print(f"{variant} D={head_dim}: fixed_us {coef[0]:.3f}, per_kilokey_us {coef[1]:.3f}, "
          f"per_mega_element_us {coef[2]:.3f}, blocks_per_sm {per_sm} ({len(rows)} rows)")
    worst = 0.0
    for f, (s, t) in zip(x, rows):
        p = sum(c * v for c, v in zip(coef, f))
        name = f'{s["batch"]},{s["heads"]},{s["seq"]},{s["head_dim"]}' + (",causal" if s["causal"] else "")
        worst = max(worst, abs(p / t - 1))
        print(f"  {name:24} measured {t:8.2f}  model {p:8.2f}  {100 * (p / t - 1):+6.1f}%")
    print(f"worst relative error {100 * worst:.1f}%")


if __name__ == "__main__":
    main(sys.argv[1:])
