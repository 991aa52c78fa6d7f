#!/usr/bin/env bash
# run 71: stage 48 (kernel parameters by constant-cache line): smoke, gate, overlap, fuzz, adversarial,
# then A/B old (35b74ea kernels) vs new, 3 rounds
set -uo pipefail
B=gpu-bundle/bin
if ! timeout 30 $B/sdpa bench --variants split,mma,wgmma --shapes 2,8,256,64 1,1,1,64 1,4,200,64,causal --modes graph --samples 2 --launches 2 > $OUT/smoke.txt 2>&1; then
  echo "SMOKE FAILED"; tail -20 $OUT/smoke.txt; exit 1
fi
{ timeout 100 $B/gpu_gate --ignored --nocapture --test-threads=1; echo "gate rc=$?"
  timeout 20 $B/overlap --ignored --nocapture --test-threads=1; echo "overlap rc=$?"
  timeout 90 $B/gpu_fuzz --ignored --nocapture --test-threads=1; echo "fuzz rc=$?"
  timeout 60 $B/adversarial --ignored --nocapture --test-threads=1; echo "adversarial rc=$?"; } > $OUT/checks.log 2>&1
grep -E "rc=|passed, .* failed|test result|kernel x case" $OUT/checks.log
AB=$(mktemp -d)
for r in 1 2 3; do
  for tag in old new; do
    bin=gpu-bundle-old/sdpa; [ $tag = new ] && bin=$B/sdpa
    timeout 60 $bin bench --variants split --shapes 2,8,256,64 1,8,512,64 1,1,1,64 1,1,256,64 2,8,256,128 --modes graph,graph-overlap --json $AB/s-$tag-$r.json > /dev/null 2>&1 || echo "bench split $tag $r failed"
    timeout 90 $bin bench --variants mma,wgmma --shapes 2,8,256,64 8,16,256,64 4,16,1024,64 4,16,1024,128 2,16,8192,64 --modes graph --json $AB/m-$tag-$r.json > /dev/null 2>&1 || echo "bench mw $tag $r failed"
  done
done
for tag in old new; do for r in 1 2 3; do
  python3 -c "
import json,sys
rows=[]
for f in sys.argv[1:3]:
    try: rows+=json.load(open(f))['rows']
    except Exception: pass
json.dump({'rows':rows},open(sys.argv[3],'w'))" $AB/s-$tag-$r.json $AB/m-$tag-$r.json $AB/ab-$tag-$r.json
done; done
tar -C $AB -cf $OUT/ab.tar .
python3 scripts/ab-table.py $AB 3 | tee $OUT/ab-table.txt
