#!/usr/bin/env python3
"""End-to-end check of `sdpa run --out-dtype` (run 258), plain Python.

  e2e.py make DIR   writes DIR/e2e-in.safetensors (F32 q, k, v of shape
                    (1,8,512,64), standard normal, which `sdpa run`
                    quantizes per head by amax) and DIR/e2e-wide.safetensors
                    (the same with V times 2^40: its scales are 2^40 times
                    the first file's, the codes the same).
  e2e.py check DIR  reads e2e-f16, e2e-bf16 and e2e-wide-bf16 .safetensors
                    from DIR and prints how far bf16 is from f16 and the wide
                    bf16 output / 2^40 from f16: both within bf16's rounding
                    (2^-9 relative, plus f16's 2^-12) if the bf16 kernels are
                    right.
"""
import json, random, struct, sys

SHAPE = [1, 8, 512, 64]
WIDE = 2.0 ** 40


def write(path, tensors):
    header, blobs, offset = {}, [], 0
    for name, dtype, shape, data in tensors:
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def read(path):
    raw = open(path, "rb").read()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    out = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        a, b = t["data_offsets"]
        data = raw[8 + n + a:8 + n + b]
        if t["dtype"] == "F16":
            vals = list(struct.unpack(f"<{len(data) // 2}e", data))
        elif t["dtype"] == "BF16":
            bits = struct.unpack(f"<{len(data) // 2}H", data)
            vals = list(struct.unpack(f"<{len(bits)}f", struct.pack(f"<{len(bits)}I", *[b << 16 for b in bits])))
        else:
            raise SystemExit(f"{path}: {name} is {t['dtype']}")
        out[name] = (t["dtype"], t["shape"], vals)
    return out


def make(d):
    rng = random.Random(258)
    n = SHAPE[0] * SHAPE[1] * SHAPE[2] * SHAPE[3]
    q, k, v = ([rng.gauss(0, 1) for _ in range(n)] for _ in range(3))
    f32 = lambda xs: struct.pack(f"<{len(xs)}f", *xs)
    write(f"{d}/e2e-in.safetensors", [(x, "F32", SHAPE, f32(t)) for x, t in (("q", q), ("k", k), ("v", v))])
    write(f"{d}/e2e-wide.safetensors",
          [("q", "F32", SHAPE, f32(q)), ("k", "F32", SHAPE, f32(k)), ("v", "F32", SHAPE, f32([x * WIDE for x in v]))])


def rel(a, b):
    num = sum((x - y) ** 2 for x, y in zip(a, b)) ** 0.5
    den = sum(y * y for y in b) ** 0.5
    worst = max(abs(x - y) / max(abs(y), 1e-3) for x, y in zip(a, b))
    return num / den, worst


def check(d):
    f16 = read(f"{d}/e2e-f16.safetensors")["o"]
    bf16 = read(f"{d}/e2e-bf16.safetensors")["o"]
    wide = read(f"{d}/e2e-wide-bf16.safetensors")["o"]
    print("dtypes", f16[0], bf16[0], wide[0], "shapes", f16[1], bf16[1], wide[1])
    assert any(abs(x) > 65504 for x in wide[2]), "the wide output should exceed f16's range"
    nan = sum(x != x for x in f16[2] + bf16[2] + wide[2])
    r1 = rel(bf16[2], f16[2])
    r2 = rel([x / WIDE for x in wide[2]], f16[2])
    print(f"NaN {nan}; bf16 vs f16: rel_l2 {r1[0]:.2e} worst rel {r1[1]:.2e}; wide bf16 / 2^40 vs f16: rel_l2 {r2[0]:.2e} worst rel {r2[1]:.2e}; max |wide| {max(abs(x) for x in wide[2]):.3e}")
    ok = nan == 0 and r1[0] < 3e-3 and r2[0] < 3e-3 and r1[1] < 1e-2 and r2[1] < 1e-2
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    cmd, d = sys.argv[1], sys.argv[2]
    sys.exit(make(d) if cmd == "make" else check(d))
