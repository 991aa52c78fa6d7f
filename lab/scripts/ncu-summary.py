#!/usr/bin/env python3
"""Where a kernel's warps wait, from the per-instruction CSV that
lab/scripts/ncu-source.sh writes (`<variant>-<tag>-sass.csv`: every SASS
instruction with its warp-stall samples).

Prints the kernel's samples in three parts, split at its first and last
matrix instruction (HMMA/QGMMA/HGMMA): before the key loop (prologue), the
loop, after it (merge, epilogue), each with its share of the samples and its
largest stall reasons; then the instructions with the most samples. (A
kernel built with two bodies, as `wgmma`'s fused and unfused exponents,
has its parts spread: look at the instructions then.)

Read it as where stall samples fall, not as time: stage 50
(lab/STAGES.md) removed a constant-cache miss that ncu charged with ~8%
of split's samples and the kernel got slower.

    usage: lab/scripts/ncu-summary.py SASS_CSV [TOP]   (TOP instructions, default 25)
"""
import csv
import sys


def main(argv):
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if argv else 2
    path, top = argv[0], int(argv[1]) if len(argv) > 1 else 25
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    header = next((r for r in rows if r and r[0] == "Address"), None)
    if header is None:
        print(f"{path}: no 'Address' header row (not an ncu --page source --csv export?)", file=sys.stderr)
        return 1
    data = rows[rows.index(header) + 1:]
    col = {name: i for i, name in enumerate(header)}
    stalls = [n for n in header if n.startswith("stall_") and "Not Issued" not in n]

    def num(row, name):
        try:
            return int(row[col[name]] or 0)
        except (ValueError, IndexError):
            return 0

    ins = [(r[col["Source"]].strip(), num(r, "Warp Stall Sampling (All Samples)"), {s: num(r, s) for s in stalls})
           for r in data if len(r) > col["Source"]]
    total = sum(n for _, n, _ in ins) or 1
    mma = [i for i, (src, _, _) in enumerate(ins) if any(op in src for op in ("HMMA", "QGMMA", "HGMMA"))]
    cuts = [0, mma[0], mma[-1] + 1, len(ins)] if mma else [0, len(ins)]
    names = ["before the first MMA", "first to last MMA", "after the last MMA"] if mma else ["whole kernel"]
    print(f"{path}: {total} samples, {len(ins)} instructions")
    for name, lo, hi in zip(names, cuts, cuts[1:]):
        part = ins[lo:hi]
        samples = sum(n for _, n, _ in part)
        reasons = {s: sum(d[s] for _, _, d in part) for s in stalls}
        largest = sorted(reasons.items(), key=lambda kv: -kv[1])[:5]
        print(f"  {name:22} {samples:8} ({100 * samples / total:4.1f}%)  "
              + ", ".join(f"{s[6:]} {v}" for s, v in largest if v))
    print(f"  the {top} instructions with the most samples (index, samples, share, instruction, largest reasons):")
    for i, (src, n, d) in sorted(enumerate(ins), key=lambda x: -x[1][1])[:top]:
        largest = sorted(d.items(), key=lambda kv: -kv[1])[:2]
        print(f"  {i:5} {n:7} {100 * n / total:4.1f}%  {src[:56]:56} "
              + ", ".join(f"{s[6:]} {v}" for s, v in largest if v))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
