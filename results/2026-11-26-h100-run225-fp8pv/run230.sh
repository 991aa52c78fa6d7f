#!/usr/bin/env bash
# Run 230 (session 25): stage 148's gate, sampled rows bounded, very-long at
# (1,1,8192,64) (gpu-bundle-diag/r228/gpu_gate rebuilt).
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader | tee $OUT/gpu.txt
timeout 400 gpu-bundle-diag/r228/gpu_gate --ignored --nocapture --test-threads=1 > $OUT/gate.log 2>&1; echo "gate rc=$?"
grep -E "passed, .* failed" $OUT/gate.log | tail -1
grep "^\[wgmma-f" $OUT/gate.log | grep -o "rel_l2=[0-9.e+-]*" | sort -t= -k2 -g | sed -n '1p;$p'
grep "very-long" $OUT/gate.log | grep "seed=0" | cut -c1-150
grep -v PASS $OUT/gate.log | grep "^\[" | head
echo "elapsed ${SECONDS}s"
