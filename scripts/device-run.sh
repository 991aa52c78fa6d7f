#!/usr/bin/env bash
# The steps a device call's script is made of (runs on the GPU machine,
# over a carried `gpu-bundle/` and experiment builds; builds nothing). A
# run script names its steps here and keeps only what is its own (the
# builds, the shapes, the predictions it tests). Every step writes into
# $OUT (default ./gpu-out) and prints its summary; the device tool returns
# at most 8 files, so each step packs its logs into one archive.
#
#   usage: scripts/device-run.sh record NAME
#            every variant, check and torch peer of gpu-bundle/
#            (scripts/gpu-run.sh gate fuzz bench peers), packed into
#            $OUT/NAME.tgz (unpack it and run `cargo xtask record DIR/record`
#            here); the mission and long rows of the summary last; its
#            suites get at least 240 s each, whatever STEP_TIMEOUT says
#          scripts/device-run.sh ab VARIANTS "SHAPES" TAG=SDPA TAG=SDPA [...]
#            the same-run A/B chain of `sdpa` builds (scripts/ab-chain.sh,
#            ROUNDS rounds, default 4) into $OUT/ab.log and $OUT/ab-json.tgz;
#            its table last
#          scripts/device-run.sh peers "SHAPES"
#            the torch peers (scripts/peers.py) into $OUT/peers.jsonl; their
#            table last
#          scripts/device-run.sh checks DIR
#            the correctness suites of the bundle in DIR (gpu_gate, overlap,
#            gpu_fuzz, adversarial, determinism) and compute-sanitizer
#            racecheck and synccheck over its `sanitize_target`, into
#            $OUT/checks.tgz; one line per suite and tool
#          scripts/device-run.sh sanitize DIR TOOL...
#            compute-sanitizer TOOLs over DIR's `sanitize_target` into
#            $OUT/sanitize.log; one line per tool
#          scripts/device-run.sh unpack ARCHIVE DIR
#            unpacks an xz tar of builds (`tar cf - -C STAGE . | xz -9e
#            --lzma2=dict=64MiB`: the device carries 64 MB with the tree,
#            and builds that share the embedded kernels pack to under 1 MB
#            each) into DIR; its files listed
# Each call also writes the GPU's name, driver, clock and serial to
# $OUT/gpu.txt (the serial tells machines apart between calls).
# STEP_TIMEOUT (default 240 s) bounds every suite and bench, so that a hang
# cannot eat the device lease. Exit status: 1 if a step failed, else 0.
set -uo pipefail
OUT=${OUT:-gpu-out}
T=${STEP_TIMEOUT:-240}
HERE=$(dirname "$0")
mkdir -p "$OUT"
export OUT
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader | tee "$OUT/gpu.txt"
step=${1:-}
shift || true
status=0

case $step in
  record)
    name=${1:?record NAME}
    work=$(mktemp -d)
    cp "$OUT/gpu.txt" "$work/"
    mkdir -p "$work/record"
    # Never under 240 s a suite: with six variants the gate and the bench
    # fill most of 170 s on a slow host (run 236 lost its record so).
    OUT=$work/record STEP_TIMEOUT=$((T < 240 ? 240 : T)) bash "$HERE/gpu-run.sh" gate fuzz bench peers \
      >"$work/record-run.txt" 2>&1 || status=1
    tar czf "$OUT/$name.tgz" -C "$work" .
    grep -E "FAIL|passed, .* failed|pairs checked" "$work/record/gate.log" | tail -4
    tail -3 "$work/record/fuzz.log"
    sed -n '/== summary ==/,$p' "$work/record-run.txt" | grep -E "split-n64|cudnn|flash|wgmma" |
      grep -E "2,8,256,64|1,8,512,64|16384|8192|4096|2048" | head -40 ;;
  ab)
    variants=${1:?ab VARIANTS SHAPES TAG=SDPA...} shapes=${2:?ab VARIANTS SHAPES TAG=SDPA...}
    shift 2
    work=$(mktemp -d)
    OUT=$work/ab ROUNDS=${ROUNDS:-4} STEP_TIMEOUT=$T bash "$HERE/ab-chain.sh" "$variants" "$shapes" graph "$@" \
      >"$OUT/ab.log" 2>&1 || status=1
    tar czf "$OUT/ab-json.tgz" -C "$work" ab
    echo "A/B: $(grep -c ' ok$' "$OUT/ab.log") rows ok, $(grep -c FAIL "$OUT/ab.log") FAIL"
    sed -n '/^variant  shape/,$p' "$OUT/ab.log" | cut -c1-190 ;;
  peers)
    # shellcheck disable=SC2086
    timeout "$T" python3 "$HERE/peers.py" ${1:?peers SHAPES} >"$OUT/peers.jsonl" 2>"$OUT/peers.err" || status=1
    python3 "$HERE/peers.py" --summarize "$OUT/peers.jsonl" ;;
  checks)
    dir=${1:?checks DIR}
    work=$(mktemp -d)/checks
    mkdir -p "$work"
    for t in gpu_gate overlap gpu_fuzz adversarial determinism; do
      timeout "$T" "$dir/$t" --ignored --nocapture --test-threads=1 >"$work/$t.log" 2>&1 && rc=0 || { rc=$?; status=1; }
      echo "$t rc=$rc: $(grep -E "test result|pairs checked|passed, .* failed" "$work/$t.log" | tail -1)"
    done
    BIN=$dir OUT=$work SANITIZE_TIMEOUT=$T bash "$HERE/sanitize.sh" racecheck synccheck >/dev/null 2>&1 || status=1
    grep -E "^(racecheck|synccheck)" "$work/sanitize.log"
    tar czf "$OUT/checks.tgz" -C "$(dirname "$work")" checks ;;
  sanitize)
    dir=${1:?sanitize DIR TOOL...}
    shift
    BIN=$dir SANITIZE_TIMEOUT=$T bash "$HERE/sanitize.sh" "$@" >/dev/null 2>&1 || status=1
    grep -E "^(memcheck|racecheck|synccheck|initcheck)" "$OUT/sanitize.log" ;;
  unpack)
    archive=${1:?unpack ARCHIVE DIR} dir=${2:?unpack ARCHIVE DIR}
    mkdir -p "$dir" && tar xJf "$archive" -C "$dir" || status=1
    (cd "$dir" && find . -type f | sort | head -20) ;;
  *)
    sed -n '10,39p' "$0"
    exit 2 ;;
esac
echo "$step: ${SECONDS}s"
exit $status
