#!/usr/bin/env bash
# Run 218 (session 24): a record of f53700e's kernels (stages 135, 138, 141, 143:
# the session's final build): every variant, check and peer
# (scripts/gpu-run.sh gate fuzz bench peers) on the bundle made from that
# commit (`cargo xtask bundle`).
# Everything is packed into $OUT/run218.tgz; the summary prints last.
set -uo pipefail
FINAL=$OUT
OUT=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader | tee $OUT/gpu.txt
mkdir -p $OUT/record
OUT=$OUT/record STEP_TIMEOUT=200 bash scripts/gpu-run.sh gate fuzz bench peers > $OUT/record-run.txt 2>&1
tar czf $FINAL/run218.tgz -C $OUT .
grep -E "FAIL|passed, .* failed|pairs checked|test result" $OUT/record/gate.log | tail -4
tail -3 $OUT/record/fuzz.log
sed -n '/== summary ==/,$p' $OUT/record-run.txt | grep -E "split-n64|cudnn|flash|wgmma" | grep -E "2,8,256,64|1,8,512,64|16384|8192|4096|2048" | head -40
echo "elapsed ${SECONDS}s"
