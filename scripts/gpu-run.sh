#!/usr/bin/env bash
# Runs on the GPU machine over a carried `gpu-bundle/` (made here by
# `cargo xtask bundle`): device facts, the correctness gate, the GPU fuzz
# suite, the benchmark and the torch peers. Logs go to $OUT (default
# ./gpu-out); the summary table is printed last.
#   usage: scripts/gpu-run.sh [gate] [fuzz] [bench] [peers]   (default: all)
set -uo pipefail
OUT=${OUT:-gpu-out}
mkdir -p "$OUT"
BIN=gpu-bundle/bin
steps=${*:-gate fuzz bench peers}
SHAPES=${SHAPES:-"2,8,256,64 1,8,512,64 4,16,2048,64 2,16,8192,64 2,16,8192,64,causal 4,16,4096,128 1,16,16384,128 1,16,16384,128,causal"}
SMALL_SHAPES=${SMALL_SHAPES:-"2,8,256,64 1,8,512,64 4,16,2048,64"}
status=0

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.draw,temperature.gpu --format=csv | tee "$OUT/gpu.csv"
"$BIN/sdpa" info | tee "$OUT/info.txt"

for step in $steps; do
  case $step in
    gate)
      "$BIN/gpu_gate" --ignored --nocapture --test-threads=1 >"$OUT/gate.log" 2>&1 || status=1
      grep -E "FAIL|passed, .* failed" "$OUT/gate.log" | tail -20 ;;
    fuzz)
      [ -x "$BIN/gpu_fuzz" ] && { "$BIN/gpu_fuzz" --ignored --nocapture --test-threads=1 >"$OUT/fuzz.log" 2>&1 || status=1; tail -5 "$OUT/fuzz.log"; } ;;
    bench)
      # shellcheck disable=SC2086
      "$BIN/sdpa" bench --variants mma --shapes $SHAPES --json "$OUT/bench-mma.json" >"$OUT/bench-mma.txt" 2>"$OUT/bench-mma.err" || status=1
      # shellcheck disable=SC2086
      "$BIN/sdpa" bench --variants naive --shapes $SMALL_SHAPES --json "$OUT/bench-naive.json" >"$OUT/bench-naive.txt" 2>"$OUT/bench-naive.err" || status=1 ;;
    peers)
      # shellcheck disable=SC2086
      python3 scripts/peers.py $SHAPES >"$OUT/peers.jsonl" 2>"$OUT/peers.err" || status=1 ;;
  esac
done

echo "== summary =="
[ -f "$OUT/bench-mma.txt" ] && cat "$OUT/bench-mma.txt" "$OUT/bench-naive.txt"
[ -f "$OUT/peers.jsonl" ] && python3 -c '
import json,sys
for line in open(sys.argv[1]):
    r=json.loads(line)
    if "median_us" in r: print(f"{r[\"peer\"]:<20} {\",\".join(map(str,r[\"shape\"]))+(\",causal\" if r[\"causal\"] else \"\"):<22} {r[\"median_us\"]:>10.2f} us")
    else: print(r)' "$OUT/peers.jsonl"
exit $status
