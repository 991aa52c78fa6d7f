#!/usr/bin/env bash
# Run 296 (issues 40, 41): the correctness suites of the merged build, side by
# side on one GPU (their time is the host's f64 reference over the cores),
# then the quantizer's accuracy table and timings alone on the GPU.
# Predictions: lab/predictions/2026-11-28-predictions-run296.md.
set -uo pipefail
B=gpu-bundle/bin
mkdir -p gpu-bundle && tar xJf gpu-bundle-diag/r296/gb.tar.xz -C gpu-bundle
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader | tee "$OUT/gpu.txt"
nproc
W=$(mktemp -d)
R="--ignored --nocapture --test-threads=1"
T=420
run() { local name=$1; shift; ( timeout $T "$@" >"$W/$name.log" 2>&1; echo "rc=$?" >>"$W/$name.log" ) & }
run gate $B/gpu_gate $R
run fuzz $B/gpu_fuzz $R
run release env SDPA_FUZZ_WORKERS=8 $B/gpu_fuzz_release $R
run device_api $B/device_api $R
run concurrency $B/concurrency $R
run overlap $B/overlap $R
run device_inputs $B/device_inputs $R
run quant_bits $B/quantizer_gpu $R codes_and_scales bad_inputs
wait
run gate89 env SDPA_IMAGE=sm_89 $B/gpu_gate $R
run release89 env SDPA_IMAGE=sm_89 SDPA_FUZZ_WORKERS=6 $B/gpu_fuzz_release $R
for tool in memcheck racecheck synccheck; do
  mkdir -p "$W/san-$tool"
  ( BIN=$B OUT=$W/san-$tool SANITIZE_TIMEOUT=$T timeout $T bash scripts/sanitize.sh $tool >/dev/null 2>&1 ) &
done
CS=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
run memcheck_quant "$CS" --tool memcheck --error-exitcode 9 $B/quantizer_gpu $R codes_and_scales
run memcheck_device_api "$CS" --tool memcheck --error-exitcode 9 $B/device_api $R
wait
# Timings alone on the GPU.
run quant_table $B/quantizer_gpu $R accuracy_table quantizer_time
wait
for f in gate fuzz release device_api concurrency overlap device_inputs quant_bits gate89 release89 memcheck_quant memcheck_device_api quant_table; do
  echo "$f: $(grep -E 'test result|ERROR SUMMARY' "$W/$f.log" | tail -1) $(tail -1 "$W/$f.log")"
done
for tool in memcheck racecheck synccheck; do grep -E "^$tool" "$W/san-$tool/sanitize.log"; done
grep -E "^total|failures|FAIL" "$W/release.log" | head -12
grep -E "^total" "$W/release89.log"
tar czf "$OUT/checks.tgz" -C "$W" .
echo "elapsed ${SECONDS}s"
