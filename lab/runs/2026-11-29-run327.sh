#!/usr/bin/env bash
# Run 327 (issue 41 item 5): is the quantizer waiting on its lag? The time
# table of the committed kernel with the host's LAG_BYTES at 8 MiB (as
# shipped), 16, 24 and 40 MiB (test binaries built with the constant
# changed; the kernel images are the same), then 8 MiB again.
# Predictions: lab/quantizer.md, step 5 (after run 326).
#   carry: gpu-bundle-diag/r326
set -uo pipefail
W=/tmp/logs327; rm -rf $W; mkdir -p $W /tmp/b327
for f in gpu-bundle-diag/r326/*quantizer_gpu.xz; do b=$(basename $f .xz); xz -dc $f > /tmp/b327/$b; chmod +x /tmp/b327/$b; done
S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader > $S
R="--ignored --nocapture --test-threads=1"
for x in new lag16 lag24 lag40 new; do
  timeout 60 /tmp/b327/$x-quantizer_gpu $R quantizer_time > $W/time-$x.log 2>&1
  echo "== $x rc=$?" >> $S; grep -E "^\| [0-9]" $W/time-$x.log | grep "H(q,k)" >> $S
done
tar czf $OUT/logs.tgz -C $W .
echo "elapsed ${SECONDS}s" >> $S
cat $S
