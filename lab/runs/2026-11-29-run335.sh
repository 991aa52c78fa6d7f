#!/usr/bin/env bash
# Run 335 (issue 42): the strides suite with its fuzz, the Python API tests,
# the bench's input drawing on every core against main before it, and the
# decode table with the peers and the copy rate.
# Predictions: lab/predictions/2026-11-29-predictions-run335.md.
#   carry: gpu-bundle-diag/r335
set -uo pipefail
W=/tmp/logs335; rm -rf $W; mkdir -p $W /tmp/b335
for f in gpu-bundle-diag/r335/*.xz; do b=$(basename $f .xz); xz -dc $f > /tmp/b335/$b; chmod +x /tmp/b335/$b; done
S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader > $S
R="--ignored --nocapture --test-threads=1"
pack() { tar czf $OUT/logs.tgz -C $W . ; }
timeout 200 /tmp/b335/strides $R > $W/strides.log 2>&1; echo "strides rc=$? $(grep -E 'test result' $W/strides.log | tail -1)" >> $S
grep -E "fuzz:|panicked" -A3 $W/strides.log | head -6 >> $S
python3 -m pip install --quiet --no-index --no-deps --target /tmp/site gpu-bundle-diag/r335/*.whl gpu-bundle-diag/r335/pytest/*.whl > $W/pip.log 2>&1
(PYTHONPATH=/tmp/site timeout 120 python3 -m pytest -q python/tests/test_api.py > $W/pytest.log 2>&1; echo "pytest test_api rc=$?" >> $S)
tail -1 $W/pytest.log >> $S
pack
for x in sdpa main-sdpa; do
  t0=$SECONDS
  timeout 150 /tmp/b335/$x bench --shapes 8,32:8,1:32768,128 --variants decode --modes graph > $W/draw-$x.log 2>&1
  echo "== $x one decode shape rc=$? wall $((SECONDS - t0)) s; $(grep -E 'drawing' $W/draw-$x.log)" >> $S
done
pack
timeout 240 /tmp/b335/sdpa bench --shapes 64,32:8,1:8192,128 8,32:8,1:32768,128 1,32:8,1:4096,128 64,32:8,16:8192,128 --variants decode --modes graph --page-size 64 > $W/decode.log 2>&1
echo "== decode table rc=$?" >> $S; grep -E "drawing|copy:|^decode" $W/decode.log | cut -c1-140 >> $S
pack
(PYTHONPATH=/tmp/site timeout 200 python3 scripts/peers.py 64,32:8,1:8192,128 8,32:8,1:32768,128 1,32:8,1:4096,128 64,32:8,16:8192,128 > $W/peers.jsonl 2> $W/peers.err; echo "peers rc=$?" >> $S)
PYTHONPATH=/tmp/site python3 scripts/peers.py --summarize $W/peers.jsonl >> $S 2>&1
pack
echo "elapsed ${SECONDS}s" >> $S
cat $S
