#!/usr/bin/env bash
# Run 346 (issues 39, 42): where a wgmma block's fixed cost lies: ncu warp
# samples per SASS instruction, warm caches, 2c8cff8's sdpa.
# Predictions: lab/predictions/2026-11-29-predictions-run346.md.
#   carry: gpu-bundle-diag/r345 (sdpa)
set -uo pipefail
W=/tmp/logs346; rm -rf $W; mkdir -p $W /tmp/b346
xz -dc gpu-bundle-diag/r345/sdpa.xz > /tmp/b346/sdpa; chmod +x /tmp/b346/sdpa
S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader > $S
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
run() { # name variant kernel shape
  timeout 150 "$NCU" --clock-control none --cache-control none --warp-sampling-interval 2 --section SourceCounters --section WarpStateStats \
    -k regex:"^$3\$" -s 2 -c 1 -o $W/$1 -f /tmp/b346/sdpa bench --shapes $4 --variants $2 --modes direct --samples 2 --launches 2 > $W/$1.log 2>&1
  echo "$1 rc=$?" >> $S
  "$NCU" -i $W/$1.ncu-rep --page source --csv --print-source sass > $W/$1-sass.csv 2>> $W/$1.log
  python3 - $W/$1-sass.csv $1 >> $S <<'PY'
import csv, sys, re
rows = list(csv.reader(open(sys.argv[1])))[1:]
head, body = rows[0], rows[1:]
src, smp, ex = head.index("Source"), head.index("Warp Stall Sampling (All Samples)"), head.index("Instructions Executed")
addr = head.index("Address")
num = lambda x: float(x.replace(",", "")) if re.fullmatch(r"[\d,.]+", x) else 0.0
a = [int(r[addr], 16) for r in body]
# The key loop: the backward branch whose body executes the most instructions.
best = None
for i, r in enumerate(body):
    m = re.search(r"BRA.*?(0x[0-9a-f]+)", r[src])
    if m:
        t = int(m.group(1), 16)
        if t < a[i]:
            j = a.index(t) if t in a else None
            if j is not None:
                w = sum(num(body[k][ex]) for k in range(j, i + 1))
                if best is None or w > best[0]: best = (w, j, i)
tot = sum(num(r[smp]) for r in body)
_, j, i = best
inside = sum(num(body[k][smp]) for k in range(j, i + 1))
before = sum(num(body[k][smp]) for k in range(0, j))
after = sum(num(body[k][smp]) for k in range(i + 1, len(body)))
print(f"{sys.argv[2]}: {tot:.0f} samples; loop {j}..{i} {100*inside/tot:.1f}%, before {100*before/tot:.1f}%, after {100*after/tot:.1f}%")
out = sorted(range(len(body)), key=lambda k: -num(body[k][smp]))
print("  top outside the loop:")
for k in [k for k in out if not j <= k <= i][:8]:
    print(f"  {k:5d} {100*num(body[k][smp])/tot:5.1f}%  {body[k][src].strip()[:70]}")
print("  top inside:")
for k in [k for k in out if j <= k <= i][:6]:
    print(f"  {k:5d} {100*num(body[k][smp])/tot:5.1f}%  {body[k][src].strip()[:70]}")
PY
}
run fp8pv-4096 wgmma-fp8pv sdpa_wgmma_fp8pv_long_d128 4,16,4096,128
run fp8pv-16384 wgmma-fp8pv sdpa_wgmma_fp8pv_long_d128 1,16,16384,128
run wgmma-4096 wgmma sdpa_wgmma_d128 4,16,4096,128
tar czf $OUT/logs.tgz -C $W --exclude='*.ncu-rep' .
echo "elapsed ${SECONDS}s" >> $S
cat $S
