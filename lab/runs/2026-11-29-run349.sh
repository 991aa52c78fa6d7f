#!/usr/bin/env bash
# Run 349 (issue 42): the packed batch against one dense sequence after
# stage 183 (4b96042's serving_time).
# Predictions: lab/predictions/2026-11-29-predictions-run349.md.
#   carry: gpu-bundle-diag/r349 (serving_time)
set -uo pipefail
W=/tmp/logs349; rm -rf $W; mkdir -p $W /tmp/b349
xz -dc gpu-bundle-diag/r349/serving_time.xz > /tmp/b349/serving_time; chmod +x /tmp/b349/serving_time
S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader > $S
timeout 120 /tmp/b349/serving_time --ignored --nocapture --test-threads=1 packed_batch > $W/serving.txt 2>&1
echo "serving_time rc=$?" >> $S; grep -E "^\||test result" $W/serving.txt >> $S
tar czf $OUT/logs.tgz -C $W .
echo "elapsed ${SECONDS}s" >> $S
cat $S
