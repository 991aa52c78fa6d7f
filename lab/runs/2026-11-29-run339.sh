#!/usr/bin/env bash
# Run 339 (issue 42): the Python tests with attention_with_kvcache.
# Predictions: lab/predictions/2026-11-29-predictions-run339.md.
#   carry: gpu-bundle-diag/r339 (the wheel and pytest's wheels)
set -uo pipefail
W=/tmp/logs339; rm -rf $W; mkdir -p $W
S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader > $S
python3 -m pip install --quiet --no-index --no-deps --target /tmp/site gpu-bundle-diag/r339/sdpa_fp8-*.whl gpu-bundle-diag/r339/pytest/*.whl > $W/pip.log 2>&1
(PYTHONPATH=/tmp/site timeout 400 python3 -m pytest -q -rf python/tests > $W/pytest.log 2>&1; echo "pytest rc=$?" >> $S)
tail -1 $W/pytest.log >> $S
grep -E "^FAILED|Error:" $W/pytest.log | head -12 >> $S
(PYTHONPATH=/tmp/site timeout 60 python3 -m pytest -q python/tests -k kvcache > $W/kvcache.log 2>&1; echo "kvcache tests rc=$? $(tail -1 $W/kvcache.log)" >> $S)
tar czf $OUT/logs.tgz -C $W .
echo "elapsed ${SECONDS}s" >> $S
cat $S
