#!/usr/bin/env bash
# run 69: stage 47 (wgmma unrolled tile copies): smoke, gate, overlap, fuzz, then A/B old (35b74ea kernels) vs new, 2 rounds
set -uo pipefail
B=gpu-bundle/bin
if ! timeout 30 $B/sdpa bench --variants wgmma --shapes 2,8,256,64 1,1,1,64 2,8,256,128 1,1,1000,128,causal --modes graph --samples 2 --launches 2 > $OUT/smoke.txt 2>&1; then
  echo "SMOKE FAILED"; tail -20 $OUT/smoke.txt; exit 1
fi
{ timeout 100 $B/gpu_gate --ignored --nocapture --test-threads=1; echo "gate rc=$?"
  timeout 20 $B/overlap --ignored --nocapture --test-threads=1; echo "overlap rc=$?"
  timeout 90 $B/gpu_fuzz --ignored --nocapture --test-threads=1; echo "fuzz rc=$?"; } > $OUT/checks.log 2>&1
grep -E "rc=|passed, .* failed|test result" $OUT/checks.log
AB=$(mktemp -d)
SH="2,8,256,64 8,16,256,64 4,16,1024,64 4,16,1024,128 4,16,2048,64 2,16,8192,64 2,16,8192,64,causal 4,16,4096,128 1,16,16384,128"
for r in 1 2; do
  for tag in old new; do
    bin=gpu-bundle-old/sdpa; [ $tag = new ] && bin=$B/sdpa
    timeout 150 $bin bench --variants wgmma --shapes $SH --modes graph --json $AB/ab-$tag-$r.json > /dev/null 2>&1 || echo "bench $tag $r failed"
  done
done
tar -C $AB -cf $OUT/ab.tar .
python3 scripts/ab-table.py $AB 2 | tee $OUT/ab-table.txt
