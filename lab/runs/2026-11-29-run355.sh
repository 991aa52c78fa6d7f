#!/usr/bin/env bash
# Run 355: every prefill variant's log-sum-exp (split's body and mma now
# write it): window (both images), layouts, device_api, gate (split, mma),
# pytest; old build against new at the split family's and mma's shapes.
# Predictions: lab/predictions/2026-11-29-predictions-run355.md.
#   carry: gpu-bundle-diag/r355 (sdpa, old-sdpa, window, layouts, device_api,
#   gpu_gate, the wheel, pytest's wheels)
set -uo pipefail
W=/tmp/logs355; rm -rf $W; mkdir -p $W /tmp/b355
for f in gpu-bundle-diag/r355/*.xz; do b=$(basename $f .xz); xz -dc $f > /tmp/b355/$b; chmod +x /tmp/b355/$b; done
S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader > $S
R="--ignored --nocapture --test-threads=1"
pack() { tar czf $OUT/logs.tgz -C $W . ; }
timeout 110 /tmp/b355/window $R > $W/window.log 2>&1; echo "window (sm_90a) rc=$? $(grep -E 'test result' $W/window.log | tail -1)" >> $S
grep -E "panicked|FAIL" $W/window.log | head -5 >> $S
timeout 70 env SDPA_IMAGE=sm_89 /tmp/b355/window $R split_and_mma every_prefill > $W/window89.log 2>&1; echo "window split+mma+plain (sm_89 image) rc=$? $(grep -E 'test result' $W/window89.log | tail -1)" >> $S
grep -E "panicked" $W/window89.log | head -3 >> $S
pack
timeout 60 /tmp/b355/layouts $R > $W/layouts.log 2>&1; echo "layouts rc=$? $(grep -E 'test result' $W/layouts.log | tail -1)" >> $S
timeout 70 /tmp/b355/device_api $R > $W/device_api.log 2>&1; echo "device_api rc=$? $(grep -E 'test result' $W/device_api.log | tail -1)" >> $S
pack
python3 -m pip install --quiet --no-index --no-deps --target /tmp/site gpu-bundle-diag/r355/sdpa_fp8-*.whl gpu-bundle-diag/r355/pytest/*.whl > $W/pip.log 2>&1
(PYTHONPATH=/tmp/site timeout 150 python3 -m pytest -q -rf python/tests > $W/pytest.log 2>&1; echo "pytest rc=$?" >> $S)
tail -1 $W/pytest.log >> $S; grep -E "^FAILED" $W/pytest.log | head -8 >> $S
pack
for round in 1 2; do
  for x in sdpa old-sdpa; do
    timeout 40 /tmp/b355/$x bench --shapes 2,8,256,64 1,8,512,64 1,16,4096,128,causal --variants split-n64,split,mma --modes graph > $W/bench-$x-$round.log 2>&1
    echo "== $x round $round rc=$?" >> $S; grep -E "^(split|mma)" $W/bench-$x-$round.log | awk '{print $1, $2, $5}' | tr '\n' ';' >> $S; echo >> $S
  done
done
pack
timeout 90 env SDPA_GATE_VARIANTS=split,mma /tmp/b355/gpu_gate $R > $W/gate.log 2>&1; echo "gate split,mma rc=$? $(grep -E 'passed, .* failed' $W/gate.log | tail -1)" >> $S
echo "$(grep -oE '^\[[a-z0-9-]+ ' $W/gate.log | sort | uniq -c | tr '\n' ' ') FAIL lines: $(grep -c FAIL $W/gate.log)" >> $S
pack
echo "elapsed ${SECONDS}s" >> $S
cat $S
