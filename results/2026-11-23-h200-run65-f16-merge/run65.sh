#!/usr/bin/env bash
# run 65: stage 44 (f16 merge partials): smoke, gate, overlap, fuzz, adversarial, determinism,
# then a 3-build interleaved A/B: old (01a2cb4), s43 (16-byte merge loads), new (a0adbc5)
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
timeout 120 $B/adversarial --ignored --nocapture --test-threads=1 > $OUT/adversarial.log 2>&1; echo "adversarial rc=$?"
timeout 60 $B/determinism --ignored --nocapture --test-threads=1 > $OUT/determinism.log 2>&1; echo "determinism rc=$?"
grep -hE "test result|FAIL|passed|failed" $OUT/gate.log $OUT/fuzz.log $OUT/adversarial.log $OUT/determinism.log | grep -v "^test .* ok$" | tail -12
SH="2,8,256,64 1,8,512,64 1,1,1,64 1,1,256,64 2,8,256,128 1,8,512,128 4,16,2048,64"
AB=$(mktemp -d)
declare -A BIN=([old]=gpu-bundle-old/sdpa [s43]=gpu-bundle-diag/sdpa-s43 [new]=$B/sdpa)
for r in 1 2 3; do
  for tag in old s43 new; do
    timeout 60 ${BIN[$tag]} bench --variants split --shapes $SH --modes graph,graph-overlap --json $AB/$tag-$r.json > /dev/null 2>&1 || echo "bench $tag $r failed"
  done
done
tar -C $AB -cf $OUT/ab.tar .
for pair in "old s43" "old new" "s43 new"; do
  set -- $pair; d=$(mktemp -d)
  for r in 1 2 3; do cp $AB/$1-$r.json $d/ab-old-$r.json; cp $AB/$2-$r.json $d/ab-new-$r.json; done
  echo "== $1 vs $2"; python3 scripts/ab-table.py $d 3 | tee $OUT/ab-table-$1-$2.txt
done
