#!/usr/bin/env bash
# Run 252, call a (session 29): record -14 on an H200, first half: the
# correctness gate (546 cases), overlap and GPU fuzz of main at 67d16cd
# (stage 153b's selection; cubin md5 2284548a...) into $OUT/rec
# (predictions: results/2026-11-26-predictions-run252.md).
set -uo pipefail
OUT=$OUT/rec bash scripts/gpu-run.sh gate fuzz | tail -12
nvidia-smi --query-gpu=name,serial,driver_version --format=csv,noheader
tar czf $OUT/rec-a.tgz -C $OUT rec && rm -r $OUT/rec
echo "elapsed ${SECONDS}s"
