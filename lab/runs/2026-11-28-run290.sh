#!/usr/bin/env bash
# Run 290 (issue 38): the correctness suites of the redesign's bundle, run
# side by side on one GPU (their time is the host's f64 reference, spread
# over the machine's cores): the correctness gate and the overlap pairs,
# the GPU fuzz, both again on the sm_89 image (its PTX JIT-compiled for
# sm_90: SDPA_IMAGE=sm_89), and compute-sanitizer memcheck, racecheck and
# synccheck. Predictions: lab/predictions/2026-11-28-predictions-run290.md.
set -uo pipefail
B=gpu-bundle/bin
mkdir -p gpu-bundle && tar xJf gpu-bundle-diag/r290/gb.tar.xz -C gpu-bundle
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader | tee "$OUT/gpu.txt"
W=$(mktemp -d)
R="--ignored --nocapture --test-threads=1"
T=540
run() { local name=$1; shift; ( timeout $T "$@" >"$W/$name.log" 2>&1; echo "rc=$?" >>"$W/$name.log" ) & }
run gate $B/gpu_gate $R
run overlap $B/overlap $R
run fuzz $B/gpu_fuzz $R
run device_inputs $B/device_inputs $R
run gate89 env SDPA_IMAGE=sm_89 $B/gpu_gate $R
run fuzz89 env SDPA_IMAGE=sm_89 $B/gpu_fuzz $R
for tool in memcheck racecheck synccheck; do
  mkdir -p "$W/san-$tool"
  ( BIN=$B OUT=$W/san-$tool SANITIZE_TIMEOUT=$T timeout $T bash scripts/sanitize.sh $tool >/dev/null 2>&1 ) &
done
wait
for f in gate overlap fuzz device_inputs gate89 fuzz89; do
  echo "$f: $(grep -E 'test result|passed, .* failed|pairs checked' "$W/$f.log" | tail -1) $(tail -1 "$W/$f.log")"
done
grep -hE "image|SDPA_IMAGE" "$W/gate89.log" | head -2
for tool in memcheck racecheck synccheck; do grep -E "^$tool" "$W/san-$tool/sanitize.log"; done
tar czf "$OUT/checks.tgz" -C "$W" .
echo "elapsed ${SECONDS}s"
