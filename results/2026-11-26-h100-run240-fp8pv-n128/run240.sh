#!/usr/bin/env bash
# Run 240 (session 27): stage 152, `wgmma-fp8pv` D = 128 with two
# warpgroups and 128-key blocks (n128), and the same two warpgroups with
# 64-key blocks (w2n64, what losing the third warpgroup costs alone).
# A/B chain base -> n128 -> w2n64 -> base2 at the D = 128 long rows, then
# the n128 build's gate (predictions:
# results/2026-11-26-predictions-run240.md).
set -uo pipefail
E=gpu-bundle-diag/r240
LONG="1,16,16384,128 4,16,4096,128 4,16,4096,128,causal 1,16,16384,128,causal 4,16,1024,128"
ROUNDS=3 STEP_TIMEOUT=220 bash scripts/device-run.sh ab wgmma-fp8pv "$LONG" base=$E/sdpa-base n128=$E/sdpa-n128 w2n64=$E/sdpa-w2n64 base2=$E/sdpa-base
echo "after A/B ${SECONDS}s"
timeout 220 $E/gpu_gate --ignored --nocapture --test-threads=1 > $OUT/gate.log 2>&1; echo "gate rc=$?"
grep -E "passed, .* failed" $OUT/gate.log | tail -1
grep -E "FAIL" $OUT/gate.log | head -5
grep "^\[wgmma-f" $OUT/gate.log | grep -o "rel_l2=[0-9.e+-]*" | sort -t= -k2 -g | sed -n '1p;$p'
gzip -f $OUT/gate.log
echo "elapsed ${SECONDS}s"
