#!/usr/bin/env bash
# Run 248, call b (session 28): the bench and torch peers of stage 153's
# bundle on the same machine as call a, the second half of record -13.
set -uo pipefail
OUT=$OUT/rec bash scripts/gpu-run.sh bench peers > $OUT/run248b.txt 2>&1
sed -n '/== summary ==/,$p' $OUT/run248b.txt | grep -E "wgmma-fp8pv|split-n64|cudnn" | grep graph -v | head -3
grep -E "^(wgmma-fp8pv|split-n64) .* graph" $OUT/run248b.txt | head -20
tar czf $OUT/rec-b.tgz -C $OUT rec run248b.txt && rm -r $OUT/rec $OUT/run248b.txt
echo "elapsed ${SECONDS}s"
