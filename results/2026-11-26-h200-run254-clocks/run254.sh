#!/usr/bin/env bash
# Run 254 (session 29): are `wgmma`'s two modes at (1,16,16384,128) the
# clocks? nvidia-smi samples the SM clock, power and the clock-event
# reasons every 20 ms while main's `sdpa` times the long D = 128 rows
# (100 one-launch samples each) and a D = 64 control whose samples are
# tight in the records; then two more causal lengths for the threshold
# (predictions: results/2026-11-26-predictions-run254.md).
set -uo pipefail
E=gpu-bundle-diag/r253
nvidia-smi --query-gpu=name,serial,driver_version,power.limit,enforced.power.limit --format=csv,noheader | tee $OUT/gpu.txt
Q=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_event_reasons.active
nvidia-smi --query-gpu=$Q --format=csv,noheader -lms 20 > $OUT/smi.csv 2>&1 &
SMI=$!
sleep 1
for row in "wgmma 1,16,16384,128" "wgmma-fp8pv 1,16,16384,128" "wgmma 2,16,8192,64" "wgmma 4,16,4096,128"; do
  set -- $row
  echo "== $1 $2 start $(date +%T.%N)"
  timeout 90 $E/sdpa bench --variants $1 --shapes $2 --modes graph --samples 100 | grep -E "^$1 "
  echo "== end $(date +%T.%N)"
  sleep 2
done
kill $SMI
python3 - "$OUT/smi.csv" <<'PY'
import sys, collections
rows = [l.strip().split(", ") for l in open(sys.argv[1]) if l.count(",") >= 4]
def num(s): return float(s.split()[0])
busy = [r for r in rows if num(r[2]) > 200]
print(f"smi samples {len(rows)}, above 200 W {len(busy)}")
c = collections.Counter((r[1], r[4]) for r in busy)
for (clk, why), n in sorted(c.items(), key=lambda x: -x[1])[:12]: print(f"{n:5d}  {clk:>10}  reasons {why}")
if busy: print("power W min/max", min(num(r[2]) for r in busy), max(num(r[2]) for r in busy), "temp max", max(r[3] for r in busy))
PY
ROWS="1,16,9280,128,causal 1,16,9344,128,causal"
ROUNDS=3 STEP_TIMEOUT=90 bash scripts/device-run.sh ab wgmma-fp8pv "$ROWS" main=$E/sdpa-main all=$E/sdpa-all main2=$E/sdpa-main
echo "elapsed ${SECONDS}s"
