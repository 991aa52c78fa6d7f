#!/usr/bin/env bash
# run 66: stage 45 (single wide accesses: mma convert_v, split output stores, Vt prepass), smoke,
# gate, overlap, fuzz; A/B old (01a2cb4) / s43 (38171db-like) / new (35b74ea); then the register-stamp phase clock.
set -uo pipefail
B=gpu-bundle/bin
if ! timeout 20 $B/sdpa bench --variants split,mma,wgmma --shapes 2,8,256,64 1,1,1,64 --modes graph --samples 2 --launches 2 > $OUT/smoke.txt 2>&1; then
  echo "SMOKE FAILED"; tail -20 $OUT/smoke.txt; exit 1
fi
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $OUT/device.txt
{ timeout 100 $B/gpu_gate --ignored --nocapture --test-threads=1; echo "gate rc=$?"
  timeout 20 $B/overlap --ignored --nocapture --test-threads=1; echo "overlap rc=$?"
  timeout 90 $B/gpu_fuzz --ignored --nocapture --test-threads=1; echo "fuzz rc=$?"; } > $OUT/checks.log 2>&1
grep -E "rc=|test result" $OUT/checks.log
AB=$(mktemp -d)
declare -A BIN=([old]=gpu-bundle-old/sdpa [s43]=gpu-bundle-diag/sdpa-s43 [new]=$B/sdpa)
for r in 1 2; do
  for tag in old s43 new; do
    timeout 60 ${BIN[$tag]} bench --variants split --shapes 2,8,256,64 1,8,512,64 1,1,1,64 2,8,256,128 --modes graph --json $AB/$tag-split-$r.json > /dev/null 2>&1 || echo "bench $tag split $r failed"
    timeout 90 ${BIN[$tag]} bench --variants mma,wgmma --shapes 2,8,256,64 8,16,256,64 4,16,1024,64 4,16,1024,128 2,16,8192,64 --modes graph --json $AB/$tag-long-$r.json > /dev/null 2>&1 || echo "bench $tag long $r failed"
  done
done
for pair in "old new" "s43 new"; do
  set -- $pair; d=$(mktemp -d)
  for r in 1 2; do
    python3 - $AB/$1-split-$r.json $AB/$1-long-$r.json $d/ab-old-$r.json <<'PY'
import json,sys
rows=[]
for f in sys.argv[1:3]:
    try: rows+=json.load(open(f))["rows"]
    except Exception: pass
json.dump({"rows":rows},open(sys.argv[3],"w"))
PY
    python3 - $AB/$2-split-$r.json $AB/$2-long-$r.json $d/ab-new-$r.json <<'PY'
import json,sys
rows=[]
for f in sys.argv[1:3]:
    try: rows+=json.load(open(f))["rows"]
    except Exception: pass
json.dump({"rows":rows},open(sys.argv[3],"w"))
PY
  done
  echo "== $1 vs $2"; python3 scripts/ab-table.py $d 2 | tee $OUT/ab-table-$1-$2.txt
done
tar -C $AB -cf $OUT/ab.tar .
echo "== phase clock (register stamps)"
timeout 120 bash scripts/phase-clock.sh run "2,8,256,64 1,8,512,64 1,1,256,64" > $OUT/phase.txt 2>&1; echo "phase rc=$?"
cat $OUT/phase.txt
