#!/usr/bin/env bash
# Run 221 (session 25): a record of the final kernels on an H200 (the last
# H200 record, 2026-11-26-2, timed record -15's kernels): every variant,
# check and peer (scripts/gpu-run.sh gate fuzz bench peers) on the bundle
# made from de2d1b0 (`cargo xtask bundle`; kernels as f0a0bb0's, PTX
# byte-identical), then compute-sanitizer memcheck and initcheck on the
# same kernels if time is left. Packed into $OUT/run221.tgz.
set -uo pipefail
FINAL=$OUT
OUT=$(mktemp -d)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader | tee $OUT/gpu.txt
mkdir -p $OUT/record
OUT=$OUT/record STEP_TIMEOUT=150 bash scripts/gpu-run.sh gate fuzz bench peers > $OUT/record-run.txt 2>&1
echo "record ${SECONDS}s"
if [ $SECONDS -lt 380 ]; then
  SAN=$(mktemp -d); OUT=$SAN SANITIZE_TIMEOUT=90 bash scripts/sanitize.sh memcheck initcheck > /dev/null 2>&1; cp $SAN/sanitize.log $OUT/
  grep -E "^(memcheck|initcheck)" $OUT/sanitize.log
fi
tar czf $FINAL/run221.tgz -C $OUT .
grep -E "FAIL|passed, .* failed|pairs checked|test result" $OUT/record/gate.log | tail -4
tail -3 $OUT/record/fuzz.log
sed -n '/== summary ==/,$p' $OUT/record-run.txt | grep -E "split-n64|cudnn|flash|wgmma" | grep -E "2,8,256,64|1,8,512,64|16384|8192|4096|2048" | head -40
echo "elapsed ${SECONDS}s"
