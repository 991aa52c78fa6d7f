#!/usr/bin/env bash
# The quantizer's speed (issue 41 item 5; lab/quantizer.md, "Speed"): the
# one-warp-per-tile schedule (the kernel runs 296-299 timed) against the
# persistent one (the default), from the GPU bundle (`cargo xtask bundle`;
# B names its bin/ folder). Prints:
#   1. the bit-for-bit suites under every schedule (codes and scales equal to
#      the CPU reference) and the typed errors;
#   2. per record shape, rotation (Hadamard on q and k, or none) and schedule:
#      the quantizer's time for f16 q, k, v in one launch, TB/s at 3 bytes
#      per element, and its ratio to the default attention kernel's time;
#   3. where `ncu` exists: one `--set full` profile of each schedule's
#      launch at (4,16,2048,64) with the rotation (reports under $OUT), and
#      a few of their figures.
# Expected device time: ~1.5 minutes (the steps run one after another: the
# timings must have the GPU to themselves).
set -uo pipefail
B=${B:-gpu-bundle/bin}
OUT=${OUT:-out}
W=$OUT/logs
mkdir -p "$W"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee "$OUT/gpu.txt"
R="--ignored --nocapture --test-threads=1"

timeout 90 $B/quantizer_gpu $R codes_and_scales three_tensors bad_inputs >"$W/bits.log" 2>&1
echo "bits: rc=$? $(grep -E 'test result' "$W/bits.log" | tail -1)"
grep -E "configurations|launches|panicked" "$W/bits.log"

timeout 120 $B/quantizer_gpu $R quantizer_time >"$W/time.log" 2>&1
echo "time: rc=$? $(grep -E 'test result' "$W/time.log" | tail -1)"
grep -E "^\|" "$W/time.log"

NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
if [ -z "$NCU" ]; then
  echo "ncu: not on this machine; no profile"
else
  for pick in "warp per tile:sdpa_quantize_f16_d64" "2 blk/SM, lag 2:sdpa_quantize_persistent_f16_d64"; do
    schedule=${pick%%:*}
    entry=${pick##*:}
    # One shape, one schedule: the entry's first launch is that schedule's
    # first call with the rotation on q and k.
    SDPA_QUANT_SHAPES=4,16,2048,64 SDPA_QUANT_SCHEDULE="$schedule" timeout 90 \
      "$NCU" --clock-control none --set full -k "regex:^${entry}\$" -c 1 -f -o "$OUT/ncu-$entry" \
      $B/quantizer_gpu $R quantizer_time >"$W/ncu-$entry.log" 2>&1
    rc=$?
    if [ $rc -ne 0 ] || [ ! -f "$OUT/ncu-$entry.ncu-rep" ]; then
      echo "ncu $entry: failed (rc=$rc): $(grep -iE 'error|warn' "$W/ncu-$entry.log" | head -3)"
      continue
    fi
    echo "ncu $entry ($schedule):"
    "$NCU" -i "$OUT/ncu-$entry.ncu-rep" --page details 2>/dev/null | grep -E \
      "^ +(Duration|DRAM Throughput|Memory Throughput|L2 Hit Rate|L1/TEX Hit Rate|Achieved Occupancy|Theoretical Occupancy|Issue Slots Busy|Issued Ipc Active|Warp Cycles Per Issued Instruction|No Eligible|Registers Per Thread|Waves Per SM) " \
      | sed 's/^ */  /'
    # Where the warps stall: the largest per-instruction stall reasons.
    "$NCU" -i "$OUT/ncu-$entry.ncu-rep" --page raw --csv 2>/dev/null \
      | python3 -c '
import csv, sys
rows = list(csv.reader(sys.stdin))
if len(rows) >= 3:
    names, values = rows[0], rows[2]
    stalls = []
    for n, v in zip(names, values):
        if n.startswith("smsp__average_warps_issue_stalled_") and n.endswith("_per_issue_active.ratio"):
            try:
                stalls.append((float(v.replace(",", "")), n[len("smsp__average_warps_issue_stalled_"):-len("_per_issue_active.ratio")]))
            except ValueError:
                pass
    top = sorted(stalls, reverse=True)[:6]
    print("  stalls per issued instruction: " + ", ".join(f"{name} {value:.2f}" for value, name in top))
' || true
  done
fi
echo "elapsed ${SECONDS}s"
