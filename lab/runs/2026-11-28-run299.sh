#!/usr/bin/env bash
# Run 299 (issues 41, 40): the release fuzz with the per-element judge for
# the lower-precision kernels, and run 296's three failures replayed; the
# one-launch quantizer (bits, memcheck, then its accuracy and time alone on
# the GPU); then Python against `sdpa bench`, alternated twice, on the
# shapes run 298 found apart. Predictions:
# lab/predictions/2026-11-28-predictions-run299.md.
set -uo pipefail
B=gpu-bundle/bin
D=gpu-bundle-diag/r299
mkdir -p gpu-bundle && tar xJf $D/gb.tar.xz -C gpu-bundle
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader | tee "$OUT/gpu.txt"
W=$OUT/logs; mkdir -p $W
R="--ignored --nocapture --test-threads=1"
T=300
run() { local name=$1; shift; ( timeout $T "$@" >"$W/$name.log" 2>&1; echo "rc=$?" >>"$W/$name.log" ) & }
run release env SDPA_FUZZ_WORKERS=12 $B/gpu_fuzz_release $R
run fuzz $B/gpu_fuzz $R
run quant_bits $B/quantizer_gpu $R codes_and_scales three_tensor bad_inputs
CS=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
run memcheck_quant "$CS" --tool memcheck --error-exitcode 9 $B/quantizer_gpu $R codes_and_scales three_tensor
wait
for s in 0xe634735e8cc63fda 0x3a8f659154042c8b 0x2191734a910aca91; do
  SDPA_FUZZ_REPLAY=sdpa_wgmma_fp8pv_long_d128_bf16:$s timeout 60 $B/gpu_fuzz_release $R 2>&1 | grep -E "PASS|FAIL" >> $W/replays.log
done
# Alone on the GPU from here.
run quant_table $B/quantizer_gpu $R accuracy_table quantizer_time; wait
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/sdpa_fp8-*.whl || exit 1
export PYTHONPATH=/tmp/site
S="4,16,4096,128 1,16,16384,128,causal 2,16,8192,64,causal"
for round in 1 2; do
  timeout 200 python3 python/benches/bench.py --shapes $S --out-dtype f16 --layout bhsd --json $W/py-$round.json > $W/py-$round.log 2>&1
  timeout 200 $B/sdpa bench --shapes $S --variants wgmma --out-dtype f16 --modes graph,direct --json $W/sdpa-$round.json > $W/sdpa-$round.log 2>&1
done
for f in release fuzz quant_bits memcheck_quant quant_table; do
  echo "$f: $(grep -E 'test result|ERROR SUMMARY' "$W/$f.log" | tail -1) $(tail -1 "$W/$f.log")"
done
grep -E "fp8pv|^total" $W/release.log
cat $W/replays.log
grep -E "^\||configurations|launches" $W/quant_table.log $W/quant_bits.log | cut -d: -f2- | head -40
for round in 1 2; do grep -E "^[0-9]" $W/py-$round.log; grep -E "graph|direct" $W/sdpa-$round.log; done
echo "elapsed ${SECONDS}s"
