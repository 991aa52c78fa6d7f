#!/usr/bin/env bash
# Run 337 (issue 42, small decode): the decode kernel's time against its
# keys (ncu, serialized), main's sdpa.
# Predictions: lab/predictions/2026-11-29-predictions-run337.md.
#   carry: gpu-bundle-diag/r336 (sdpa)
set -uo pipefail
W=/tmp/logs337; rm -rf $W; mkdir -p $W /tmp/b337
xz -dc gpu-bundle-diag/r336/sdpa.xz > /tmp/b337/sdpa; chmod +x /tmp/b337/sdpa
S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader > $S
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
for skv in 64 256 1024 4096 16384; do
  timeout 90 "$NCU" --clock-control none --metrics gpu__time_duration.sum,launch__grid_size --csv \
    /tmp/b337/sdpa bench --shapes 1,32:8,1:$skv,128 --variants decode --modes direct --samples 3 --launches 4 > $W/ncu-$skv.csv 2> $W/ncu-$skv.err
  echo "== Skv $skv rc=$?" >> $S
  python3 - $W/ncu-$skv.csv >> $S <<'PY'
import csv, sys, collections
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
head = rows[0]; k = head.index("Kernel Name"); m = head.index("Metric Name"); v = head.index("Metric Value")
vals = collections.defaultdict(lambda: collections.defaultdict(list))
for r in rows[1:]:
    try: vals[r[k].split("(")[0]][r[m]].append(float(r[v].replace(",", "")))
    except ValueError: pass
for name, ms in vals.items():
    t = sorted(ms.get("gpu__time_duration.sum", [0]))
    print(f"{name}: n={len(t)} median {t[len(t)//2]/1000:.2f} us (min {t[0]/1000:.2f}); grid {ms.get('launch__grid_size',[0])[0]:.0f}")
PY
done
tar czf $OUT/logs.tgz -C $W .
echo "elapsed ${SECONDS}s" >> $S
cat $S
