#!/usr/bin/env bash
# Run 351: Options::lse (plans that keep to log-sum-exp writers), plan_paged
# and Python's kvcache call at any query length (a prefill chunk over a
# paged cache), timed against the dense kernel; the GPU tests they touch.
# Predictions: lab/predictions/2026-11-29-predictions-run351.md.
#   carry: gpu-bundle-diag/r351 (sdpa, device_api, window, decode_paged_time,
#   the wheel, pytest's wheels)
set -uo pipefail
W=/tmp/logs351; rm -rf $W; mkdir -p $W /tmp/b351
for f in gpu-bundle-diag/r351/*.xz; do b=$(basename $f .xz); xz -dc $f > /tmp/b351/$b; chmod +x /tmp/b351/$b; done
S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader > $S
R="--ignored --nocapture --test-threads=1"
pack() { tar czf $OUT/logs.tgz -C $W . ; }
timeout 120 /tmp/b351/device_api $R > $W/device_api.log 2>&1; echo "device_api rc=$? $(grep -E 'test result' $W/device_api.log | tail -1)" >> $S
grep -E "^paged|^decode causal|panicked" $W/device_api.log | head -12 >> $S
timeout 90 /tmp/b351/window $R > $W/window.log 2>&1; echo "window (sm_90a) rc=$? $(grep -E 'test result' $W/window.log | tail -1)" >> $S
timeout 60 env SDPA_IMAGE=sm_89 /tmp/b351/device_api $R paged decode_key > $W/device_api89.log 2>&1; echo "device_api paged+decode (sm_89 image) rc=$? $(grep -E 'test result' $W/device_api89.log | tail -1)" >> $S
pack
timeout 150 /tmp/b351/decode_paged_time $R > $W/paged_time.log 2>&1; echo "decode_paged_time rc=$?" >> $S
grep -E "^\|" $W/paged_time.log >> $S
pack
DEC="1,32:8,1:4096,128 8,32:8,1:32768,128 64,32:8,1:8192,128 64,32:8,16:8192,128 2,16:4,4:8192,64"
timeout 120 env SDPA_IMAGE=sm_89 /tmp/b351/sdpa bench --shapes $DEC --variants decode,mma,split --modes graph > $W/bench89.log 2>&1
echo "== sm_89 image, decode shapes rc=$?" >> $S; grep -E "^(decode|mma|split) " $W/bench89.log | awk '{print $1, $2, $5}' >> $S
pack
python3 -m pip install --quiet --no-index --no-deps --target /tmp/site gpu-bundle-diag/r351/sdpa_fp8-*.whl gpu-bundle-diag/r351/pytest/*.whl > $W/pip.log 2>&1
(PYTHONPATH=/tmp/site timeout 240 python3 -m pytest -q -rf python/tests > $W/pytest.log 2>&1; echo "pytest rc=$?" >> $S)
tail -1 $W/pytest.log >> $S
grep -E "^FAILED|Error:" $W/pytest.log | head -12 >> $S
pack
echo "elapsed ${SECONDS}s" >> $S
cat $S
