#!/usr/bin/env bash
# Run 336 (issue 42, small decode): per-kernel times of the small decode
# on main and on h/decode-small-splits, by ncu (serialized kernels).
# Predictions: lab/predictions/2026-11-29-predictions-run336.md.
#   carry: gpu-bundle-diag/r336 (sdpa: main 29b0cb0; splits-sdpa: r331's)
set -uo pipefail
W=/tmp/logs336; rm -rf $W; mkdir -p $W /tmp/b336
for f in gpu-bundle-diag/r336/*.xz; do b=$(basename $f .xz); xz -dc $f > /tmp/b336/$b; chmod +x /tmp/b336/$b; done
S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader > $S
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
for x in sdpa splits-sdpa sdpa splits-sdpa; do
  timeout 90 "$NCU" --clock-control none --metrics gpu__time_duration.sum,launch__grid_size,sm__warps_active.avg.pct_of_peak_sustained_active --csv \
    /tmp/b336/$x bench --shapes 1,32:8,1:4096,128 --variants decode --modes direct --samples 3 --launches 4 > $W/ncu-$x.csv 2> $W/ncu-$x.err
  echo "== $x rc=$?" >> $S
  python3 - $W/ncu-$x.csv >> $S <<'PY'
import csv, sys, collections
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
head = rows[0]; k = head.index("Kernel Name"); m = head.index("Metric Name"); v = head.index("Metric Value")
vals = collections.defaultdict(lambda: collections.defaultdict(list))
for r in rows[1:]:
    try: vals[r[k].split("(")[0]][r[m]].append(float(r[v].replace(",", "")))
    except ValueError: pass
for name, ms in vals.items():
    t = sorted(ms.get("gpu__time_duration.sum", [0]))
    print(f"{name}: n={len(t)} median {t[len(t)//2]/1000:.2f} us (min {t[0]/1000:.2f}); grid {ms.get('launch__grid_size',[0])[0]:.0f}; warps active {ms.get('sm__warps_active.avg.pct_of_peak_sustained_active',[0])[0]:.1f}%")
PY
done
tar czf $OUT/logs.tgz -C $W .
echo "elapsed ${SECONDS}s" >> $S
cat $S
