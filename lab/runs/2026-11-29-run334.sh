#!/usr/bin/env bash
# Run 334 (issue 42 item 5): strided rows through the bindings (6722216):
# the strides suite, the candle op's tests and the Python tests on the
# GPU. Predictions: lab/predictions/2026-11-29-predictions-run334.md.
#   carry: gpu-bundle-diag/r334 (strides.xz, candle_op.gz, the wheel and
#   pytest's wheels)
set -uo pipefail
W=/tmp/logs334; rm -rf $W; mkdir -p $W
S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader > $S
R="--ignored --nocapture --test-threads=1"
pack() { tar czf $OUT/logs.tgz -C $W . ; }
xz -dc gpu-bundle-diag/r334/strides.xz > /tmp/strides && chmod +x /tmp/strides
timeout 120 /tmp/strides $R > $W/strides.log 2>&1; echo "strides rc=$? $(grep -E 'test result' $W/strides.log | tail -1)" >> $S
grep -E "panicked" -A3 $W/strides.log | head -6 >> $S
gunzip -c gpu-bundle-diag/r334/candle_op.gz > /tmp/candle_op && chmod +x /tmp/candle_op
(export LD_LIBRARY_PATH=$(python3 -c 'import nvidia, os; print(os.path.join(list(nvidia.__path__)[0], "cu13", "lib"))'):${LD_LIBRARY_PATH:-}
 timeout 200 /tmp/candle_op $R > $W/candle_op.log 2>&1; echo "candle_op rc=$? $(grep -E 'test result' $W/candle_op.log | tail -1)" >> $S)
grep -E "fused|panicked" -A2 $W/candle_op.log | head -10 >> $S
pack
python3 -m pip install --quiet --no-index --no-deps --target /tmp/site gpu-bundle-diag/r334/sdpa_fp8-*.whl gpu-bundle-diag/r334/pytest/*.whl > $W/pip.log 2>&1
(PYTHONPATH=/tmp/site timeout 300 python3 -m pytest -q python/tests > $W/pytest.log 2>&1; echo "pytest rc=$?" >> $S)
tail -3 $W/pytest.log >> $S
grep -E "FAILED|Error" $W/pytest.log | head -10 >> $S
pack
echo "elapsed ${SECONDS}s" >> $S
cat $S
