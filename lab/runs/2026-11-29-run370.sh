#!/usr/bin/env bash
# Run 370 (issues 39, 41, 42): the suites that launch through the host's
# whole path (its launch now sizes each entry's block by
# `KernelInfo::threads`) on the session's final build: adversarial,
# determinism, overlap, device_api, layouts, strides, window; and the
# Python binding's pytest.
# Predictions: lab/predictions/2026-11-29-predictions-run370.md.
#   carry: gpu-bundle-diag/r370 (the test binaries, the sdpa_fp8 wheel, pytest's wheels)
set -uo pipefail
W=/tmp/logs370; rm -rf $W; mkdir -p $W /tmp/b370
for f in gpu-bundle-diag/r370/*.xz; do b=$(basename $f .xz); xz -dc $f > /tmp/b370/$b; chmod +x /tmp/b370/$b; done
S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader > $S
R="--ignored --nocapture --test-threads=1"
pack() { tar czf $OUT/logs.tgz -C $W . ; }
for t in adversarial determinism overlap device_api layouts strides window; do
  timeout 70 /tmp/b370/$t $R > $W/$t.log 2>&1; echo "$t rc=$? $(grep -E 'test result' $W/$t.log | tail -1)" >> $S
  grep -E "panicked|FAIL" $W/$t.log | head -3 >> $S
  pack
done
python3 -m pip install --quiet --no-index --no-deps --target /tmp/site gpu-bundle-diag/r370/sdpa_fp8-*.whl gpu-bundle-diag/r370/pytest/*.whl > $W/pip.log 2>&1
(PYTHONPATH=/tmp/site timeout 190 python3 -m pytest -q -rf python/tests > $W/pytest.log 2>&1; echo "pytest rc=$?" >> $S)
tail -1 $W/pytest.log >> $S; grep -E "^FAILED" $W/pytest.log | head -8 >> $S
pack
echo "elapsed ${SECONDS}s" >> $S
cat $S
