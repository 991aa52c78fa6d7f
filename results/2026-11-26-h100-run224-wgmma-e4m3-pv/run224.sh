#!/usr/bin/env bash
# Run 224 (session 25): stage 146, `wgmma` with E4M3 P·V (pv8, in
# gpu-bundle-diag/r224/pv8): the A/B chain base -> pv8 -> base2 (times
# kept for rows that fail the check: AB_TIMES_ONLY=1), then pv8's
# correctness gate (its failures are the accuracy this costs).
set -uo pipefail
E=gpu-bundle-diag/r224/pv8
SHAPES="1,16,16384,128 4,16,4096,128 4,16,4096,128,causal 4,16,1024,128 2,16,8192,64 4,16,2048,64 2,16,8192,64,causal 8,16,512,64"
AB_TIMES_ONLY=1 ROUNDS=3 bash scripts/device-run.sh ab wgmma "$SHAPES" base=gpu-bundle/bin/sdpa pv8=$E/sdpa base2=gpu-bundle/bin/sdpa
timeout 200 $E/gpu_gate --ignored --nocapture --test-threads=1 > $OUT/gate-pv8.log 2>&1
echo "pv8 gate: $(grep -c 'PASS$' $OUT/gate-pv8.log) PASS, $(grep -c 'FAIL' $OUT/gate-pv8.log) FAIL lines"
grep "^\[wgmma" $OUT/gate-pv8.log | grep -o "rel_l2=[0-9.e+-]*" | sort -t= -k2 -g | sed -n '1p;$p'
grep "^\[wgmma" $OUT/gate-pv8.log | grep -v PASS | head -12 | cut -c1-160
grep -E "passed, .* failed" $OUT/gate-pv8.log | tail -2
echo "elapsed ${SECONDS}s"
