#!/usr/bin/env bash
# run 56: setup before griddepcontrol.wait; A/B split 27d37fb (old) vs new, graph and graph-overlap, 3 rounds
set -uo pipefail
export STEP_TIMEOUT=200
bash scripts/gpu-run.sh gate fuzz > $OUT/run.txt 2>&1
SH="2,8,256,64 1,8,512,64 1,1,1,64 1,8,1024,64 2,8,256,128 1,8,512,128"
AB=$(mktemp -d)
for r in 1 2 3; do
  for tag in old new; do
    bin=gpu-bundle-old/sdpa; [ $tag = new ] && bin=gpu-bundle/bin/sdpa
    echo "== round $r $tag" >> $OUT/run.txt
    timeout 200 $bin bench --variants split --shapes $SH --modes graph,graph-overlap --json $AB/ab-$tag-$r.json 2>&1 | grep -v '^\[' >> $OUT/run.txt
  done
done
tar -C $AB -cf $OUT/ab.tar .
python3 scripts/ab-table.py $AB 3 | tee $OUT/ab-table.txt
grep -E "passed|failed|FAIL" $OUT/run.txt | tail -8
