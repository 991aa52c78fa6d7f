#!/usr/bin/env bash
# run 73: stage 50 (parameters in the descriptor's constant-cache line, scales ahead of the copies): gate, fuzz, A/B vs 35b74ea
set -uo pipefail
B=gpu-bundle/bin
if ! timeout 30 $B/sdpa bench --variants split,mma,wgmma --shapes 2,8,256,64 1,1,1,64 1,4,200,64,causal --modes graph --samples 2 --launches 2 > $OUT/smoke.txt 2>&1; then
  echo "SMOKE FAILED"; tail -20 $OUT/smoke.txt; exit 1
fi
{ timeout 100 $B/gpu_gate --ignored --nocapture --test-threads=1; echo "gate rc=$?"
  timeout 60 $B/gpu_fuzz --ignored --nocapture --test-threads=1; echo "fuzz rc=$?"; } > $OUT/checks.log 2>&1
grep -E "rc=|passed, .* failed" $OUT/checks.log
AB=$(mktemp -d)
for r in 1 2; do
  for tag in old new; do
    bin=gpu-bundle-old/sdpa; [ $tag = new ] && bin=$B/sdpa
    timeout 60 $bin bench --variants split,mma,wgmma --shapes 2,8,256,64 1,8,512,64 1,1,1,64 8,16,256,64 --modes graph --json $AB/ab-$tag-$r.json > /dev/null 2>&1 || echo "bench $tag $r failed"
  done
done
tar -C $AB -cf $OUT/ab.tar .
python3 scripts/ab-table.py $AB 2 | tee $OUT/ab-table.txt
