#!/usr/bin/env python3
"""Phase clock diagnostic of `split` (lab/scripts/phase-clock.sh): inputs and report.

  phase-clock.py input B,H,S,D FILE    write random F16 q, k, v as safetensors
  phase-clock.py report B,H,S,D FILE   read `o` written by the patched build

The patched kernel (lab/patches/phase-clock.patch) has lane 0 of warp w of each
block write 32 u32 words over output row w of the block (rows 32 per block),
%clock cycles since the kernel's entry unless named:
  1 %smid   2 the group's key blocks   3 BlockJob ready
  4 thread 0's mbarrier setup done (others: at once)   5 after the block barrier
  6 Q (and key block 0) landed   7 Q fragments issued
  8 + 3i, 9 + 3i, 10 + 3i (step i < 4): K/V landed, softmax done (scores
  ready), step done (its P.V accumulators ready)
  20 the group's "done" barrier   21 merge published (after the block barrier)
  22 the slice merged   23 stores issued   24 the final block barrier
"Ready" marks read %clock predicated on the value, so they wait for it.
Pure Python (no numpy, no torch).
"""
import json
import random
import statistics
import struct
import sys

BLOCK_M = 32


def shape(text):
    b, h, s, d = (int(x) for x in text.split(","))
    return b, h, s, d


def write_input(dims, path):
    b, h, s, d = dims
    n = b * h * s * d
    rnd = random.Random(1)
    header, blobs, offset = {}, [], 0
    for name in ("q", "k", "v"):
        data = struct.pack(f"<{n}e", *(rnd.uniform(-2.0, 2.0) for _ in range(n)))
        header[name] = {"dtype": "F16", "shape": [b, h, s, d], "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def read_output(path):
    raw = open(path, "rb").read()
    (n,) = struct.unpack_from("<Q", raw)
    meta = json.loads(raw[8 : 8 + n])["o"]
    lo, hi = meta["data_offsets"]
    return meta["shape"], raw[8 + n + lo : 8 + n + hi]


def stats(values):
    values = sorted(values)
    if not values:
        return "-"
    q = lambda f: values[min(len(values) - 1, int(f * len(values)))]
    return f"{statistics.median(values):8.0f} {q(0.1):8.0f} {q(0.9):8.0f}"


def report(dims, path):
    b, h, s, d = dims
    shp, data = read_output(path)
    assert shp == [b, h, s, d], shp
    warps = []
    for bi in range(b):
        for hi in range(h):
            for qb in range((s + BLOCK_M - 1) // BLOCK_M):
                for w in range(min(8, s - qb * BLOCK_M)):
                    row = (bi * h + hi) * s + qb * BLOCK_M + w
                    warps.append(struct.unpack_from("<32I", data, row * d * 2))
    phases = {}

    def add(name, value):
        phases.setdefault(name, []).append(value)

    for w in warps:
        add("BlockJob", w[3])
        add("barrier setup (thread 0)", w[4] - w[3])
        add("block barrier", w[5] - w[4])
        add("Q landed", w[6] - w[5])
        add("Q fragments", w[7] - w[6])
        prev = w[7]
        for i in range(min(w[2], 4)):
            add(f"step {i}: K/V wait", w[8 + 3 * i] - prev)
            add(f"step {i}: QK + softmax", w[9 + 3 * i] - w[8 + 3 * i])
            add(f"step {i}: PV + refill", w[10 + 3 * i] - w[9 + 3 * i])
            prev = w[10 + 3 * i]
        add("done barrier", w[20] - prev)
        add("publish + block barrier", w[21] - w[20])
        add("merge the slice", w[22] - w[21])
        add("stores issued", w[23] - w[22])
        add("last block barrier", w[24] - w[23])
        add("total cycles", w[24])
    print(f"phase clock, shape {b},{h},{s},{d}: {len(warps)} warps, {len({w[1] for w in warps})} SMs")
    print(f"{'phase (cycles)':32} {'median':>8} {'p10':>8} {'p90':>8}")
    for name, values in phases.items():
        print(f"{name:32} {stats(values)}")


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in ("input", "report"):
        sys.exit(__doc__)
    dims = shape(sys.argv[2])
    (write_input if sys.argv[1] == "input" else report)(dims, sys.argv[3])


if __name__ == "__main__":
    main()
