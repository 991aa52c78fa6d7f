#!/usr/bin/env python3
"""CPU emulation (pure Python, no GPU, no numpy) of what rounding the softmax
probabilities P costs the attention output: P in f16 (what the kernels do),
as one E4M3 term, or as two (P_hi + P_lo), each scaled by 2^8 into E4M3's
range; Q, K, V are E4M3 values, N(0, SIGMA^2) before rounding. Prints the
rel_l2 of O against the unrounded-P result over every 4th query row of one
256 x 256 x 64 head (lab/STAGES.md, closing note of session 10).
    usage: lab/scripts/fp8-pv-precision.py [SEED] [SIGMA]
"""
import math, random, sys
def e4m3(x):
    if x == 0.0 or x != x: return 0.0
    s = -1.0 if x < 0 else 1.0; a = abs(x)
    if a >= 448.0: return s * 448.0
    m, e = math.frexp(a)           # a = m * 2^e, m in [0.5, 1)
    e -= 1                         # a = (2m) * 2^e, 2m in [1, 2)
    e = max(e, -6)                 # subnormals below 2^-6
    q = 2.0 ** (e - 3)             # 3 mantissa bits
    return s * round(a / q) * q
def f16(x):
    if x == 0.0: return 0.0
    m, e = math.frexp(abs(x)); e -= 1; e = max(e, -14)
    q = 2.0 ** (e - 10)
    return math.copysign(round(abs(x) / q) * q, x)
random.seed(int(sys.argv[1]) if len(sys.argv) > 1 else 1)
S, D = 256, 64
SIG = float(sys.argv[2]) if len(sys.argv) > 2 else 2.0
rnd = lambda: e4m3(random.gauss(0, 1) * SIG)
Q = [[rnd() for _ in range(D)] for _ in range(S)]
K = [[rnd() for _ in range(D)] for _ in range(S)]
V = [[rnd() for _ in range(D)] for _ in range(S)]
scale = 1 / math.sqrt(D)
modes = ["f16", "e4m3", "e4m3x2"]
err = {m: 0.0 for m in modes}; ref2 = 0.0
for i in range(0, S, 4):   # every 4th query row
    s = [sum(Q[i][d] * K[j][d] for d in range(D)) * scale for j in range(S)]
    mx = max(s); p = [math.exp(x - mx) for x in s]; l = sum(p)
    ref = [sum(p[j] * V[j][d] for j in range(S)) / l for d in range(D)]
    ref2 += sum(x * x for x in ref)
    for m in modes:
        if m == "f16": pq = [f16(x) for x in p]
        elif m == "e4m3": pq = [e4m3(256 * x) / 256 for x in p]
        else:
            hi = [e4m3(256 * x) for x in p]
            pq = [(h + e4m3(256 * x - h)) / 256 for h, x in zip(hi, p)]
        o = [sum(pq[j] * V[j][d] for j in range(S)) / l for d in range(D)]
        err[m] += sum((a - b) ** 2 for a, b in zip(o, ref))
for m in modes: print(f"{m:8} rel_l2 {math.sqrt(err[m] / ref2):.2e}")
