#!/usr/bin/env bash
# run 64: stage 42 (K before V) and 43 (16-byte merge loads): smoke, gate, fuzz, then a
# 4-build interleaved A/B: old (01a2cb4), kfirst (6078e91), merge (38171db minus 6078e91), new (38171db)
set -uo pipefail
B=gpu-bundle/bin
if ! timeout 20 $B/sdpa bench --variants split --shapes 2,8,256,64 1,1,1,64 2,8,256,128 --modes graph --samples 2 --launches 2 > $OUT/smoke.txt 2>&1; then
  echo "SMOKE FAILED"; tail -20 $OUT/smoke.txt; exit 1
fi
grep -v '^\[' $OUT/smoke.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $OUT/device.txt
timeout 100 $B/gpu_gate --ignored --nocapture --test-threads=1 > $OUT/gate.log 2>&1; echo "gate rc=$?"
timeout 20 $B/overlap --ignored --nocapture --test-threads=1 >> $OUT/gate.log 2>&1; echo "overlap rc=$?"
timeout 90 $B/gpu_fuzz --ignored --nocapture --test-threads=1 > $OUT/fuzz.log 2>&1; echo "fuzz rc=$?"
grep -E "test result|FAIL" $OUT/gate.log $OUT/fuzz.log | tail -6
SH="2,8,256,64 1,8,512,64 1,1,1,64 1,1,256,64 2,8,256,128 1,8,512,128 4,16,2048,64"
AB=$OUT/ab; mkdir -p $AB
declare -A BIN=([old]=gpu-bundle-old/sdpa [kfirst]=gpu-bundle-diag/sdpa-kfirst [merge]=gpu-bundle-diag/sdpa-merge [new]=$B/sdpa)
for r in 1 2 3; do
  for tag in old kfirst merge new; do
    timeout 60 ${BIN[$tag]} bench --variants split --shapes $SH --modes graph,graph-overlap --json $AB/$tag-$r.json > /dev/null 2>&1 || echo "bench $tag $r failed"
  done
done
for tag in kfirst merge new; do
  d=$(mktemp -d)
  for r in 1 2 3; do cp $AB/old-$r.json $d/ab-old-$r.json; cp $AB/$tag-$r.json $d/ab-new-$r.json; done
  echo "== old vs $tag"; python3 scripts/ab-table.py $d 3 | tee $OUT/ab-table-$tag.txt
done
