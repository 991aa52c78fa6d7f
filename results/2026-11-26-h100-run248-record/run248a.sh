#!/usr/bin/env bash
# Run 248, call a (session 28): stage 153's checks (gate with the new
# cases mid-d128 and long-causal-d128, overlap, GPU fuzz) into $OUT/rec,
# the first half of record -13 (predictions:
# results/2026-11-26-predictions-run248.md).
set -uo pipefail
OUT=$OUT/rec bash scripts/gpu-run.sh gate fuzz | tail -12
grep -E "^\[wgmma-fp8pv +(mid|long|very-long|long-causal)-d128" $OUT/rec/gate.log | cut -c1-170
tar czf $OUT/rec-a.tgz -C $OUT rec && rm -r $OUT/rec
echo "elapsed ${SECONDS}s"
