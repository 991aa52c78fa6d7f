#!/usr/bin/env bash
# compute-sanitizer over the bundled `sanitize_target` test executable (every
# kernel once on the mission, odd-causal and GQA shapes; made here by
# `cargo xtask bundle`). Runs on the GPU machine (no cargo needed) and from
# `cargo xtask sanitize`.
#   usage: scripts/sanitize.sh [TOOL ...]   (default: memcheck racecheck synccheck initcheck)
# Prints one summary line per tool; writes ONE log, $OUT/sanitize.log (OUT
# defaults to gpu-out). Exit status: 0 all clean; 1 a tool reported an error
# or the test failed; 2 cannot run (no compute-sanitizer, no executable, or a
# device/runtime compute-sanitizer does not support).
# Environment: COMPUTE_SANITIZER=<path>, BIN=<dir> (default gpu-bundle/bin),
# SANITIZE_TIMEOUT=<seconds per tool> (default 300: a hang must not eat the lease).
set -uo pipefail
OUT=${OUT:-gpu-out}
BIN=${BIN:-gpu-bundle/bin}
TARGET=$BIN/sanitize_target
tools=${*:-memcheck racecheck synccheck initcheck}
T=${SANITIZE_TIMEOUT:-300}

find_sanitizer() {
  if [ -n "${COMPUTE_SANITIZER:-}" ]; then echo "$COMPUTE_SANITIZER"; return; fi
  command -v compute-sanitizer 2>/dev/null && return
  local c
  for c in /usr/local/cuda/bin/compute-sanitizer /usr/local/cuda/compute-sanitizer/compute-sanitizer \
           /usr/local/cuda-*/bin/compute-sanitizer /opt/cuda/bin/compute-sanitizer; do
    [ -x "$c" ] && { echo "$c"; return; }
  done
}
CS=$(find_sanitizer)
if [ -z "$CS" ] || [ ! -x "$CS" ]; then
  echo "sanitize: compute-sanitizer not found (looked at \$COMPUTE_SANITIZER, PATH, /usr/local/cuda*/bin);" \
       "it ships with the CUDA toolkit" >&2
  exit 2
fi
if [ ! -x "$TARGET" ]; then
  echo "sanitize: $TARGET not found: run \`cargo xtask bundle\` first (or set BIN)" >&2
  exit 2
fi

mkdir -p "$OUT"
LOG=$OUT/sanitize.log
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
{
  echo "# compute-sanitizer over $TARGET --ignored --test-threads=1 --nocapture"
  echo "# date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "# sanitizer: $CS ($("$CS" --version 2>&1 | grep -i version | tail -1))"
  if command -v nvidia-smi >/dev/null; then
    echo "# device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -1)"
  else
    echo "# device: unknown (no nvidia-smi)"
  fi
} >"$LOG"
cat "$LOG"

failed=0
unsupported=0
for tool in $tools; do
  start=$(date +%s)
  timeout "$T" "$CS" --tool "$tool" --error-exitcode 1 --print-limit 20 \
    "$TARGET" --ignored --test-threads=1 --nocapture >"$tmp" 2>&1
  rc=$?
  secs=$(( $(date +%s) - start ))
  { echo; echo "===== $tool (exit $rc, ${secs}s) ====="; cat "$tmp"; } >>"$LOG"
  summary=$(grep -E "(ERROR|RACECHECK) SUMMARY" "$tmp" | tail -1 | sed 's/^========= *//')
  tests=$(grep -E "^test result:" "$tmp" | tail -1)
  if [ "$rc" -eq 124 ]; then
    verdict="FAIL (timed out after ${T}s)"
    failed=1
  elif grep -qiE "device not supported|not supported on this (device|platform)" "$tmp"; then
    verdict="UNSUPPORTED (compute-sanitizer cannot attach to this device or runtime)"
    unsupported=1
  elif [ "$rc" -eq 0 ] && grep -q "test result: ok. 1 passed" "$tmp"; then
    verdict="clean"
  else
    verdict="FAIL (exit $rc)"
    failed=1
  fi
  printf '%-10s %s: %s; %s [%ss]\n' "$tool" "$verdict" "${summary:-no sanitizer summary}" \
    "${tests:-no test result}" "$secs" | tee -a "$LOG"
done

if [ "$failed" -ne 0 ]; then
  echo "sanitize: FAILED (log: $LOG)" | tee -a "$LOG"
  exit 1
elif [ "$unsupported" -ne 0 ]; then
  echo "sanitize: could not run on this machine (log: $LOG)" | tee -a "$LOG"
  exit 2
fi
echo "sanitize: all clean ($tools) (log: $LOG)" | tee -a "$LOG"
