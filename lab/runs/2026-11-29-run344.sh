#!/usr/bin/env bash
# Run 344 (issues 39, 42): each kernel of a call timed alone (ncu, warm
# caches): the kv_tiles prepass against the attention kernel at run 343's
# shapes and in the packed batch. Main's build.
# Predictions: lab/predictions/2026-11-29-predictions-run344.md.
#   carry: gpu-bundle-diag/r341 (sdpa)
set -uo pipefail
W=/tmp/logs344; rm -rf $W; mkdir -p $W /tmp/b344
xz -dc gpu-bundle-diag/r341/sdpa.xz > /tmp/b344/sdpa; chmod +x /tmp/b344/sdpa
S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader > $S
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
summ() {
python3 - "$1" "$2" >> $S <<'PY'
import csv, sys, collections
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
if not rows: print(sys.argv[2], ": no kernels"); sys.exit()
head = rows[0]; k = head.index("Kernel Name"); v = head.index("Metric Value"); m = head.index("Metric Name")
t = collections.defaultdict(lambda: collections.defaultdict(list))
for r in rows[1:]:
    try: t[r[k].split("(")[0]][r[m]].append(float(r[v].replace(",", "")))
    except ValueError: pass
for n, ms in t.items():
    x = sorted(ms["gpu__time_duration.sum"]); g = ms.get("launch__grid_size", [0])[0]
    print(f"{sys.argv[2]}: {n} n={len(x)} median {x[len(x)//2]/1000:.1f} us, grid {g:.0f}")
PY
}
LENS=4096,3000,2000,1500,1200,1000,800,700,600,400,300,250,200,150,100,88
for v in wgmma wgmma-fp8pv; do
  for shape in 4,16,4096,128 16,16,1024,128 1,16,6016,128,causal; do
    timeout 120 "$NCU" --clock-control none --cache-control none --metrics gpu__time_duration.sum,launch__grid_size --csv -s 4 -c 12 \
      /tmp/b344/sdpa bench --shapes $shape --variants $v --modes direct --samples 3 --launches 4 > $W/$v-$shape.csv 2> $W/$v-$shape.err
    summ $W/$v-$shape.csv "$v $shape"
  done
  timeout 120 "$NCU" --clock-control none --cache-control none --metrics gpu__time_duration.sum,launch__grid_size --csv -k regex:packed -s 2 -c 6 \
    /tmp/b344/sdpa bench --shapes 1,16,4096,128,causal --packed $LENS --variants $v --modes direct --samples 3 --launches 4 > $W/$v-packed.csv 2> $W/$v-packed.err
  summ $W/$v-packed.csv "$v packed (attention)"
  timeout 120 "$NCU" --clock-control none --cache-control none --metrics gpu__time_duration.sum,launch__grid_size --csv -k regex:kv_tiles -s 2 -c 12 \
    /tmp/b344/sdpa bench --shapes 1,16,4096,128,causal --packed $LENS --variants $v --modes direct --samples 3 --launches 4 > $W/$v-packed-pre.csv 2> $W/$v-packed-pre.err
  summ $W/$v-packed-pre.csv "$v packed+dense (prepass)"
done
echo "== graph, for the sums" >> $S
timeout 120 /tmp/b344/sdpa bench --shapes 4,16,4096,128 16,16,1024,128 1,16,6016,128,causal 1,16,4096,128,causal --packed $LENS --variants wgmma,wgmma-fp8pv --modes graph > $W/graph.txt 2>&1
grep -E "^wgmma" $W/graph.txt | awk '{print $1, $2, $3, $5}' >> $S
tar czf $OUT/logs.tgz -C $W .
echo "elapsed ${SECONDS}s" >> $S
cat $S
