#!/usr/bin/env bash
# Run 365 (issues 41, 42): the Python binding's pytest suite on the final
# build, with test_opcheck_of_the_bshd_op asking for the log-sum-exp at
# every variant.
# Predictions: lab/predictions/2026-11-29-predictions-run365.md.
#   carry: gpu-bundle-diag/r365 (the sdpa_fp8 wheel, pytest's wheels)
set -uo pipefail
W=/tmp/logs365; rm -rf $W; mkdir -p $W
S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader > $S
pack() { tar czf $OUT/logs.tgz -C $W . ; }
python3 -m pip install --quiet --no-index --no-deps --target /tmp/site gpu-bundle-diag/r365/sdpa_fp8-*.whl gpu-bundle-diag/r365/pytest/*.whl > $W/pip.log 2>&1
(PYTHONPATH=/tmp/site timeout 190 python3 -m pytest -q -rf python/tests > $W/pytest.log 2>&1; echo "pytest rc=$?" >> $S)
tail -1 $W/pytest.log >> $S; grep -E "^FAILED" $W/pytest.log | head -8 >> $S
grep -E "opcheck_of_the_bshd_op" $W/pytest.log | head -3 >> $S
pack
echo "elapsed ${SECONDS}s" >> $S
cat $S
