#!/usr/bin/env bash
# run 63: split with prologue K/V multicast in clusters of two (non-causal); smoke test first, then gate, fuzz, A/B vs 27d37fb
set -uo pipefail
B=gpu-bundle/bin
if ! timeout 20 $B/sdpa bench --variants split --shapes 2,8,256,64 1,1,1,64 --modes graph --samples 2 --launches 2 > $OUT/smoke.txt 2>&1; then
  echo "SMOKE FAILED"; cat $OUT/smoke.txt | tail -20; exit 1
fi
cat $OUT/smoke.txt | grep -v '^\['
timeout 100 $B/gpu_gate --ignored --nocapture --test-threads=1 > $OUT/gate.log 2>&1; echo "gate rc=$?"
timeout 20 $B/overlap --ignored --nocapture --test-threads=1 >> $OUT/gate.log 2>&1; echo "overlap rc=$?"
timeout 60 $B/gpu_fuzz --ignored --nocapture --test-threads=1 > $OUT/fuzz.log 2>&1; echo "fuzz rc=$?"
grep -E "passed|failed|FAIL" $OUT/gate.log $OUT/fuzz.log | tail -6
SH="2,8,256,64 1,8,512,64 1,1,256,64 4,16,2048,64 2,8,256,128"
AB=$(mktemp -d)
for r in 1 2; do
  for tag in old new; do
    bin=gpu-bundle-old/sdpa; [ $tag = new ] && bin=$B/sdpa
    timeout 40 $bin bench --variants split --shapes $SH --modes graph,graph-overlap --json $AB/ab-$tag-$r.json > /dev/null 2>&1
  done
done
tar -C $AB -cf $OUT/ab.tar .
python3 scripts/ab-table.py $AB 2 | tee $OUT/ab-table.txt
