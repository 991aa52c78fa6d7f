#!/usr/bin/env bash
# Run 315 (issue 42), the two branches session 38 left unmerged, each from
# its own carried build: h/fusedmerge's bundle (decode's last split merges
# the splits: device_api, decode_paged_time's merge table, window's decode
# twins) and h/py2's wheel and python/ (pytest: attention_varlen, [B, S, H,
# D] without copies, return_lse).
#   carry: gpu-bundle-diag/r315fm (gb.tar.xz) and gpu-bundle-diag/py2
#   (sdpa_fp8-*.whl, pytest/*.whl, python.tgz: the branch's python/).
set -uo pipefail
W=/tmp/logs315; rm -rf $W; mkdir -p $W
S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader > $S
R="--ignored --nocapture --test-threads=1"
pack() { tar czf $OUT/logs.tgz -C $W . ; }
FM=/tmp/fm; rm -rf $FM && mkdir -p $FM && tar xJf gpu-bundle-diag/r315fm/gb.tar.xz -C $FM
timeout 120 $FM/bin/device_api $R > $W/api.log 2>&1; echo "fm device_api rc=$? $(grep -E 'test result' $W/api.log | tail -1)" >> $S
grep -hE "FAIL|panicked" -A3 $W/api.log | head -8 >> $S
timeout 120 $FM/bin/window $R > $W/window.log 2>&1; echo "fm window rc=$? $(grep -E 'test result' $W/window.log | tail -1)" >> $S
pack
timeout 200 $FM/bin/decode_paged_time merges $R > $W/merges.log 2>&1; echo "fm merges rc=$?" >> $S
grep -E "^\|" $W/merges.log >> $S
pack
P=/tmp/py2; rm -rf $P && mkdir -p $P && tar xzf gpu-bundle-diag/py2/python.tgz -C $P
python3 -m pip install --quiet --no-index --no-deps --target /tmp/site gpu-bundle-diag/py2/sdpa_fp8-*.whl gpu-bundle-diag/py2/pytest/*.whl > $W/pip.log 2>&1
(cd $P && PYTHONPATH=/tmp/site timeout 240 python3 -m pytest -q python/tests > $W/pytest.log 2>&1; echo "py2 pytest rc=$?" >> $S)
tail -3 $W/pytest.log >> $S
grep -E "FAILED|Error" $W/pytest.log | head -8 >> $S
pack
echo "elapsed ${SECONDS}s" >> $S
cat $S
