#!/usr/bin/env bash
# Run 101 (diagnostic for a cluster key split of `split`): the unchanged split
# launched plain vs in clusters of 2 along x (SDPA_EXP_CLUSTER=2, sdpa-cl
# experiment build), and proxy shapes with 256 blocks (2 per SM) whose blocks
# see 128 / 256 keys as the halves of a cluster key split would.
set -uo pipefail
export OUT=${OUT:-gpu-out}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > "$OUT/device.txt"
B=gpu-bundle-diag/r101/sdpa-cl
SHAPES="2,8,256,64 1,8,512,64 1,1,64,64 4,16,128,64 2,16,256,64 4,8,128,64 2,8,128,64 2,8,512,64"
for r in 1 2; do
  for c in 1 2; do
    echo "== round $r cluster $c"
    SDPA_EXP_CLUSTER=$c timeout 240 $B bench --variants split --shapes $SHAPES --modes graph --json "$OUT/cl$c-$r.json" | grep -v '^\['
  done
done > "$OUT/run101.txt" 2>&1
cat "$OUT/device.txt"
python3 - "$OUT" <<'PY'
import json,sys,glob,os
out=sys.argv[1]; best={}
for f in glob.glob(out+'/cl*-*.json'):
    c=os.path.basename(f)[2]
    d=json.load(open(f))
    rows=d['rows'] if isinstance(d,dict) and 'rows' in d else d
    for row in rows:
        sh=row['shape']; k=('%d,%d,%d,%d'%(sh['batch'],sh['heads'],sh['seq'],sh['head_dim']),c)
        v=row.get('median_us')
        if v is not None: best[k]=min(best.get(k,1e9),v)
shapes=sorted({k[0] for k in best})
for s in shapes: print(s, 'plain %.2f'%best.get((s,'1'),0), 'cluster2 %.2f'%best.get((s,'2'),0))
PY
tail -5 "$OUT/run101.txt"
