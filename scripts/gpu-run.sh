#!/usr/bin/env bash
# Runs on the GPU machine over a carried `gpu-bundle/` (made here by
# `cargo xtask bundle`): device facts, the correctness gate, the GPU fuzz
# suite, the benchmark and the torch peers. Logs go to $OUT (default
# ./gpu-out), at most 8 files (the device tool returns no more):
# device.txt, gate.log, fuzz.log, bench-variants.json,
# peers.jsonl, bench.txt (and ncu.txt, issue3.log with those steps). The
# summary table is printed last.
#   usage: scripts/gpu-run.sh [gate] [fuzz] [bench] [peers] [ncu] [issue3]
#   (default: gate fuzz bench peers). bench also times every variant at
#   (1,1,1,64) (one block, one key: the launch-and-latency floor) into
#   bench.txt. ncu profiles one launch per variant at NCU_SHAPE (default the
#   mission shape) with Nsight Compute (speed of light, warp states,
#   scheduler, occupancy). issue3 runs compute-sanitizer
#   (scripts/sanitize.sh), the adversarial and determinism suites and, when
#   gpu-bundle-bug/gpu_fuzz exists (a bundle built with
#   lab/patches/deliberate-bug.patch applied), the GPU fuzz on the planted bug;
#   all into $OUT/issue3.log.
set -uo pipefail
OUT=${OUT:-gpu-out}
mkdir -p "$OUT"
BIN=gpu-bundle/bin
steps=${*:-gate fuzz bench peers}
SHAPES=${SHAPES:-"2,8,256,64 1,8,512,64 4,16,2048,64 2,16,8192,64 2,16,8192,64,causal 4,16,4096,128 1,16,16384,128 1,16,16384,128,causal"}
VARIANTS=${VARIANTS:-mma,wgmma,wgmma-fp8pv,split,split-wg,split-n64}
NCU_SHAPE=${NCU_SHAPE:-2,8,256,64}
# Every step is bounded: a hung kernel must not eat the device lease.
T=${STEP_TIMEOUT:-240}
status=0

{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.draw,temperature.gpu,serial --format=csv
  "$BIN/sdpa" info; } 2>&1 | tee "$OUT/device.txt"

for step in $steps; do
  case $step in
    gate)
      timeout "$T" "$BIN/gpu_gate" --ignored --nocapture --test-threads=1 >"$OUT/gate.log" 2>&1 || status=1
      # Overlapped (programmatic dependent) launches give the ordered bits (sm_90a).
      timeout "$T" "$BIN/overlap" --ignored --nocapture --test-threads=1 >>"$OUT/gate.log" 2>&1 || status=1
      grep -E "FAIL|passed, .* failed|pairs checked" "$OUT/gate.log" | tail -20 ;;
    fuzz)
      [ -x "$BIN/gpu_fuzz" ] && { timeout "$T" "$BIN/gpu_fuzz" --ignored --nocapture --test-threads=1 >"$OUT/fuzz.log" 2>&1 || status=1; tail -5 "$OUT/fuzz.log"; } ;;
    bench)
      # shellcheck disable=SC2086
      timeout "$T" "$BIN/sdpa" bench --variants "$VARIANTS" --shapes $SHAPES --json "$OUT/bench-variants.json" >>"$OUT/bench.txt" 2>&1 || status=1
      # shellcheck disable=SC2086
      timeout "$T" "$BIN/sdpa" bench --variants "$VARIANTS" --shapes 1,1,1,64 --modes graph >>"$OUT/bench.txt" 2>&1 || status=1 ;;
    issue3)
      R="--ignored --nocapture --test-threads=1"
      { SAN_OUT=$(mktemp -d); OUT=$SAN_OUT timeout 900 bash scripts/sanitize.sh || status=1; cat "$SAN_OUT/sanitize.log"
        for t in adversarial determinism; do echo "== $t"; timeout "$T" "$BIN/$t" $R 2>&1 | tail -25 || status=1; done
        if [ -x gpu-bundle-bug/gpu_fuzz ]; then
          echo "== deliberate bug (lab/patches/deliberate-bug.patch): the GPU fuzz must fail and shrink"
          timeout "$T" gpu-bundle-bug/gpu_fuzz $R 2>&1 | grep -E "Test failed|minimal failing|cases passed|FuzzCase" | head -60
        fi; } >"$OUT/issue3.log" 2>&1
      grep -E "^(memcheck|racecheck|synccheck|initcheck)|passed|failed|Test failed" "$OUT/issue3.log" | head -30 ;;
    ncu)
      NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
      if [ -z "$NCU" ]; then echo "ncu: not found" | tee "$OUT/ncu.txt"; else
        for v in ${VARIANTS//,/ }; do
          echo "== $v $NCU_SHAPE"
          timeout "$T" "$NCU" --clock-control none -k "regex:sdpa_${v//-/_}_d" -c 1 --launch-skip 3 \
            --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section Occupancy \
            --section LaunchStats --section MemoryWorkloadAnalysis \
            --metrics "regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio" \
            "$BIN/sdpa" bench --variants "$v" --shapes "$NCU_SHAPE" --modes direct --samples 1 --launches 4 2>&1 \
            | grep -v "^==PROF==" || status=1
        done >"$OUT/ncu.txt" 2>&1
        grep -E "^== |Duration|Warp Cycles Per Issued|Achieved Occupancy|Registers Per|stalled_(long_sc|barrier|short_sc|wait|math|mio|lg_th|not_sel|no_inst)" "$OUT/ncu.txt" | head -60
      fi ;;
    peers)
      # shellcheck disable=SC2086
      timeout "$T" python3 scripts/peers.py $SHAPES >"$OUT/peers.jsonl" 2>>"$OUT/device.txt" || status=1 ;;
  esac
done

echo "== summary =="
[ -f "$OUT/bench.txt" ] && grep -v '^\[' "$OUT/bench.txt"
[ -f "$OUT/peers.jsonl" ] && python3 scripts/peers.py --summarize "$OUT/peers.jsonl"
exit $status
