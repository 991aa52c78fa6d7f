#!/usr/bin/env bash
# Run 345: kv_tiles' 16-byte Vt stores (2c8cff8) checked and timed against
# main's sdpa; attention_with_kvcache(k=, v=) in the Python tests.
# Predictions: lab/predictions/2026-11-29-predictions-run345.md.
#   carry: gpu-bundle-diag/r345 (sdpa, main-sdpa, gpu_gate, gpu_fuzz,
#   gpu_fuzz_packed, the wheel, pytest's wheels)
set -uo pipefail
W=/tmp/logs345; rm -rf $W; mkdir -p $W /tmp/b345
for f in gpu-bundle-diag/r345/*.xz; do b=$(basename $f .xz); xz -dc $f > /tmp/b345/$b; chmod +x /tmp/b345/$b; done
S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader > $S
R="--ignored --nocapture --test-threads=1"
timeout 200 env SDPA_GATE_VARIANTS=wgmma,wgmma-fp8pv /tmp/b345/gpu_gate $R > $W/gate.log 2>&1; echo "gate rc=$? $(grep -E 'passed, .* failed' $W/gate.log | tail -1)" >> $S
timeout 150 /tmp/b345/gpu_fuzz_packed $R > $W/fuzz_packed.log 2>&1; echo "gpu_fuzz_packed rc=$? $(grep -E 'test result' $W/fuzz_packed.log | tail -1)" >> $S
timeout 200 env PROPTEST_CASES=64 /tmp/b345/gpu_fuzz $R > $W/fuzz.log 2>&1; echo "gpu_fuzz (64 cases) rc=$? $(grep -E 'test result' $W/fuzz.log | tail -1)" >> $S
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
for x in sdpa main-sdpa; do
  for v in wgmma wgmma-fp8pv; do
    timeout 90 "$NCU" --clock-control none --cache-control none --metrics gpu__time_duration.sum --csv -k regex:kv_tiles -s 2 -c 6 \
      /tmp/b345/$x bench --shapes 4,16,4096,128 --variants $v --modes direct --samples 3 --launches 4 > $W/pre-$x-$v.csv 2>/dev/null
    python3 - $W/pre-$x-$v.csv "$x $v" >> $S <<'PY'
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
v = rows[0].index("Metric Value")
t = sorted(float(r[v].replace(",", "")) / 1000 for r in rows[1:])
print(f"prepass {sys.argv[2]} (4,16,4096,128): n={len(t)} median {t[len(t)//2]:.1f} us")
PY
  done
done
LENS=4096,3000,2000,1500,1200,1000,800,700,600,400,300,250,200,150,100,88
for round in 1 2; do
  for x in sdpa main-sdpa; do
    timeout 100 /tmp/b345/$x bench --shapes 4,16,4096,128 16,16,1024,128 2,16,8192,64 1,16,4096,128,causal --packed $LENS \
      --variants wgmma,wgmma-fp8pv --modes graph > $W/bench-$x-$round.log 2>&1
    echo "== $x round $round rc=$?" >> $S; grep -E "^wgmma" $W/bench-$x-$round.log | awk '{print $1, $2, $3, $5}' >> $S
  done
done
python3 -m pip install --quiet --no-index --no-deps --target /tmp/site gpu-bundle-diag/r345/sdpa_fp8-*.whl gpu-bundle-diag/r345/pytest/*.whl > $W/pip.log 2>&1
(PYTHONPATH=/tmp/site timeout 300 python3 -m pytest -q -rf python/tests > $W/pytest.log 2>&1; echo "pytest rc=$?" >> $S)
tail -1 $W/pytest.log >> $S
grep -E "^FAILED|Error:" $W/pytest.log | head -12 >> $S
tar czf $OUT/logs.tgz -C $W .
echo "elapsed ${SECONDS}s" >> $S
cat $S
