#!/usr/bin/env bash
# Run 294 (issue 38): what runs 290-293 left out, on the same bundle
# (5462d53): the adversarial and determinism suites and compute-sanitizer
# initcheck, side by side.
set -uo pipefail
B=gpu-bundle/bin
mkdir -p gpu-bundle && tar xJf gpu-bundle-diag/r290/gb.tar.xz -C gpu-bundle
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader | tee "$OUT/gpu.txt"
W=$(mktemp -d)
R="--ignored --nocapture --test-threads=1"
T=330
for t in adversarial determinism; do ( timeout $T $B/$t $R >"$W/$t.log" 2>&1; echo "rc=$?" >>"$W/$t.log" ) & done
( BIN=$B OUT=$W/san SANITIZE_TIMEOUT=$T timeout $T bash scripts/sanitize.sh initcheck >/dev/null 2>&1 ) &
wait
for t in adversarial determinism; do echo "$t: $(grep -E 'test result' "$W/$t.log" | tail -1) $(tail -1 "$W/$t.log")"; done
grep -hE "cases|checked" "$W/adversarial.log" | tail -3
grep -E "^initcheck" "$W/san/sanitize.log"
tar czf "$OUT/checks294.tgz" -C "$W" .
echo "elapsed ${SECONDS}s"
