#!/usr/bin/env bash
# Run 378 (stage 196's final build, after the K-image cleanup): the suites
# runs 375-376 did not run (determinism, overlap, device_api), pytest of
# the wheel, and the release fuzz of four D = 128 score twins.
# Predictions: lab/predictions/2026-11-29-predictions-run378.md.
#   carry: gpu-bundle-diag/r378 (determinism, overlap, device_api,
#   gpu_fuzz_release), .whl (sdpa_fp8 wheel, pytest/)
set -uo pipefail
W=/tmp/logs378; rm -rf $W; mkdir -p $W /tmp/b378
for f in gpu-bundle-diag/r378/*.xz; do b=$(basename $f .xz); xz -dc $f > /tmp/b378/$b; chmod +x /tmp/b378/$b; done
S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader > $S
R="--ignored --nocapture --test-threads=1"
pack() { tar czf $OUT/logs.tgz -C $W . ; }
for t in determinism overlap device_api; do
  timeout 70 /tmp/b378/$t $R > $W/$t.log 2>&1; echo "$t rc=$? $(grep -E 'test result' $W/$t.log | tail -1)" >> $S
  grep -E "panicked|FAIL" $W/$t.log | head -3 >> $S
done
pack
timeout 100 env SDPA_FUZZ_ENTRIES=wgmma_window_d128,wgmma_fp8pv_softcap_d128 /tmp/b378/gpu_fuzz_release $R > $W/fuzz.log 2>&1; echo "release fuzz (wgmma window d128, fp8pv softcap d128; f16 and bf16) rc=$?" >> $S
grep -E "^sdpa_|total" $W/fuzz.log | awk '{print $1, $2, $3, $4, $5, $6, $7, $8}' | head -6 >> $S
pack
python3 -m pip install --quiet --no-index --no-deps --target /tmp/site .whl/sdpa_fp8-*.whl .whl/pytest/*.whl > $W/pip.log 2>&1
(PYTHONPATH=/tmp/site timeout 200 python3 -m pytest -q -rf python/tests > $W/pytest.log 2>&1; echo "pytest rc=$?" >> $S)
tail -1 $W/pytest.log >> $S; grep -E "^FAILED" $W/pytest.log | head -8 >> $S
pack
echo "elapsed ${SECONDS}s" >> $S
cat $S
