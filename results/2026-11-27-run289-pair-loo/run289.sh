#!/usr/bin/env bash
# Run 289 (prepared in session 33, not yet run): the leave-one-out
# diagnostic (scripts/leave-one-out.patch over e2d2fa8, whose kernels are
# 1a2672d's) on `split-n64`, whose pair-row kernel runs (1,8,512,64) and
# (2,8,512,64), to see what bounds its key loop now that the copies land
# early (stage 168d). Predictions: results/2026-11-27-predictions-run289.md.
# The builds: `scripts/leave-one-out.sh build` here (LEAVE_OUT 0..7 into
# gpu-bundle-diag/sdpa-<n>), packed as gpu-bundle-diag/r289/loo.tar.xz
# (`tar cf - -C STAGE . | xz -9e --lzma2=dict=64MiB`); carry
# gpu-bundle-diag/r289. Outputs are wrong by design except LEAVE_OUT 0.
set -uo pipefail
B=gpu-bundle-diag/r289/x
mkdir -p $B && tar xJf gpu-bundle-diag/r289/loo.tar.xz -C $B
nvidia-smi --query-gpu=name,serial,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
S="1,8,512,64 2,8,512,64 2,8,256,64 1,8,511,64"
AB_TIMES_ONLY=1 ROUNDS=3 STEP_TIMEOUT=60 bash scripts/ab-chain.sh split-n64 "$S" graph \
  l0=$B/sdpa-0 l1=$B/sdpa-1 l2=$B/sdpa-2 l3=$B/sdpa-3 l4=$B/sdpa-4 l5=$B/sdpa-5 \
  l6=$B/sdpa-6 l7=$B/sdpa-7 l0b=$B/sdpa-0 > "$OUT/ab.log" 2>&1
tail -6 "$OUT/ab.log" | cut -c1-220
tar czf "$OUT/ab.tgz" -C "$OUT" $(cd "$OUT" && ls ab-*.json) && rm -f "$OUT"/ab-*.json
echo "elapsed ${SECONDS}s"
