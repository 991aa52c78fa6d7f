#!/usr/bin/env bash
# Run 241 (session 27): stage 152b, `wgmma-fp8pv` D = 128 with 128-key
# blocks in three warpgroups (n128w3, spilling) or 192-key blocks in two
# (n192), beside run 240's n128. A/B chain base -> n128 -> n128w3 -> n192
# -> base2 at the D = 128 long rows, then the n192 build's gate
# (predictions: results/2026-11-26-predictions-run241.md).
set -uo pipefail
E=gpu-bundle-diag/r240
LONG="1,16,16384,128 4,16,4096,128 4,16,4096,128,causal 1,16,16384,128,causal 4,16,1024,128"
ROUNDS=3 STEP_TIMEOUT=220 bash scripts/device-run.sh ab wgmma-fp8pv "$LONG" base=$E/sdpa-base n128=$E/sdpa-n128 n128w3=$E/sdpa-n128w3 n192=$E/sdpa-n192 base2=$E/sdpa-base
echo "after A/B ${SECONDS}s"
timeout 200 $E/gpu_gate-n192 --ignored --nocapture --test-threads=1 > $OUT/gate.log 2>&1; echo "gate rc=$?"
grep -E "passed, .* failed" $OUT/gate.log | tail -1
grep -E "FAIL" $OUT/gate.log | head -5
grep "^\[wgmma-f" $OUT/gate.log | grep -o "rel_l2=[0-9.e+-]*" | sort -t= -k2 -g | sed -n '1p;$p'
gzip -f $OUT/gate.log
echo "elapsed ${SECONDS}s"
