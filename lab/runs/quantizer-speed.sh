#!/usr/bin/env bash
# The quantizer's speed (issue 41 item 5; lab/quantizer.md, "Speed"), from
# the GPU bundle (`cargo xtask bundle`; B names its bin/ folder). Everything
# it prints also goes to one log, $OUT/quantizer-speed.log:
#   1. the bit-for-bit suites (codes and scales equal to the CPU reference)
#      and the typed errors;
#   2. per record shape and rotation (Hadamard on q and k, or none): the
#      quantizer's time for f16 q, k, v in one launch, TB/s at 3 bytes per
#      element, and its ratio to the default attention kernel's time;
#   3. where `ncu` exists: one `--set full` profile of the launch at
#      (4,16,2048,64) with the rotation on q and k and one without (reports
#      under $OUT), each followed by its details page and its largest stall
#      reasons.
# Expected device time: ~1.5 minutes (the steps run one after another: the
# timings must have the GPU to themselves).
set -uo pipefail
B=${B:-gpu-bundle/bin}
OUT=${OUT:-out}
W=$OUT/logs
mkdir -p "$W"
exec > >(tee "$OUT/quantizer-speed.log") 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
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
  entry=sdpa_quantize_f16_d64
  # The time table's launches of the entry at this shape: the rotating
  # ones first (a warm-up and 20 timed), then the plain ones.
  for pick in hadamard:0 none:21; do
    what=${pick%%:*}
    skip=${pick##*:}
    report="$OUT/ncu-$what"
    SDPA_QUANT_SHAPES=4,16,2048,64 timeout 120 \
      "$NCU" --clock-control none --set full -k "regex:^${entry}\$" -s "$skip" -c 1 -f -o "$report" \
      $B/quantizer_gpu $R quantizer_time >"$W/$(basename "$report").log" 2>&1
    rc=$?
    if [ $rc -ne 0 ] || [ ! -f "$report.ncu-rep" ]; then
      echo "ncu $entry, rotation $what: failed (rc=$rc): $(grep -iE 'error|warn' "$W/$(basename "$report").log" | head -3)"
      continue
    fi
    echo "ncu $entry at 4,16,2048,64, rotation $what: details"
    "$NCU" -i "$report.ncu-rep" --page details 2>&1 | sed 's/^/  /'
    # Where the warps stall: the largest per-instruction stall reasons.
    "$NCU" -i "$report.ncu-rep" --page raw --csv 2>&1 \
      | python3 -c '
import csv, sys
rows = list(csv.reader(sys.stdin))
stalls = []
if len(rows) >= 3:
    names, values = rows[0], rows[2]
    prefix, suffix = "smsp__average_warps_issue_stalled_", "_per_issue_active.ratio"
    for n, v in zip(names, values):
        if n.startswith(prefix) and n.endswith(suffix):
            try:
                stalls.append((float(v.replace(",", "")), n[len(prefix):-len(suffix)]))
            except ValueError:
                pass
top = sorted(stalls, reverse=True)[:6]
print("  stalls per issued instruction: " + (", ".join(f"{name} {value:.2f}" for value, name in top) or f"none read ({len(rows)} csv rows)"))
'
  done
fi
echo "elapsed ${SECONDS}s"
