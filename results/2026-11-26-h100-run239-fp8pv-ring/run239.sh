#!/usr/bin/env bash
# Run 239 (session 26): stage 151, `wgmma-fp8pv`'s warpgroups issuing their
# products in turn (stage 56's ring of named barriers, there on the f16
# `wgmma`, here on `wgmma-fp8pv` only). A/B chain base -> ring -> base2 at
# the long rows, then the ring build's gate (predictions:
# results/2026-11-26-predictions-run239.md).
set -uo pipefail
E=gpu-bundle-diag/r239
LONG="1,16,16384,128 4,16,4096,128 4,16,4096,128,causal 1,16,16384,128,causal 2,16,8192,64 4,16,2048,64 2,16,8192,64,causal 4,16,1024,128"
ROUNDS=3 STEP_TIMEOUT=200 bash scripts/device-run.sh ab wgmma-fp8pv "$LONG" base=$E/sdpa-base ring=$E/sdpa-ring base2=$E/sdpa-base
echo "after A/B ${SECONDS}s"
timeout 200 $E/gpu_gate --ignored --nocapture --test-threads=1 > $OUT/gate.log 2>&1; echo "gate rc=$?"
grep -E "passed, .* failed" $OUT/gate.log | tail -1
grep "^\[wgmma-f" $OUT/gate.log | grep -o "rel_l2=[0-9.e+-]*" | sort -t= -k2 -g | sed -n '1p;$p'
gzip -f $OUT/gate.log
echo "elapsed ${SECONDS}s"
