#!/usr/bin/env bash
# Where the small decode's warps wait, by instruction (not yet run): ncu's
# warp-state samples per SASS instruction of sdpa_decode_d128 at
# (1,32:8,1:64,128) (one key block a block: the fixed path alone) and at
# (1,32:8,1:4096,128), the 25 instructions with the most samples each, with
# their stall reasons. Usage on the GPU machine, from a bundle's sdpa:
#   lab/scripts/decode-stall-sites.sh path/to/sdpa $OUT
# (lab/decode-small.md: the fixed path's memory round trips are the
# suspects: scales, tensor-map descriptors, Q, the first K/V tiles, the
# partial's stores.)
set -uo pipefail
SDPA=$1; OUT=$2
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
for skv in 64 4096; do
  timeout 120 "$NCU" --clock-control none --section SourceCounters --section WarpStateStats \
    -k regex:sdpa_decode_d128 -c 1 -o "$OUT/stalls-$skv" -f \
    "$SDPA" bench --shapes "1,32:8,1:$skv,128" --variants decode --modes direct --samples 1 --launches 1 \
    > "$OUT/stalls-$skv.log" 2>&1
  # Per-instruction samples as CSV: address, SASS, and the sampled stall columns.
  "$NCU" -i "$OUT/stalls-$skv.ncu-rep" --page source --csv --print-source sass \
    > "$OUT/stalls-$skv-sass.csv" 2>> "$OUT/stalls-$skv.log"
  python3 - "$OUT/stalls-$skv-sass.csv" "$skv" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
head = rows[0]
def col(name):
    return next((i for i, h in enumerate(head) if h.strip().lower().startswith(name)), None)
src, samples = col("source"), col("warp stall sampling (all")
if src is None or samples is None:
    sys.exit(f"Skv {sys.argv[2]}: columns not found: {head[:12]}")
def num(x):
    try: return float(x.replace(",", ""))
    except ValueError: return 0.0
top = sorted(rows[1:], key=lambda r: -num(r[samples]))[:25]
total = sum(num(r[samples]) for r in rows[1:])
print(f"== Skv {sys.argv[2]}: {total:.0f} samples; top 25 instructions")
for r in top:
    print(f"{num(r[samples]):6.0f} {100 * num(r[samples]) / max(total, 1):5.1f}%  {r[src].strip()[:90]}")
PY
done
