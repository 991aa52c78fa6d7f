#!/usr/bin/env bash
# Run 386 (issue 42): the serving figures on stage 200's build, for the
# closing note: the packed causal batch against one dense sequence of the
# same work (serving_time), and the paged cache against the contiguous
# one (decode_paged_time: decode shapes and a prefill chunk).
# Predictions: lab/predictions/2026-11-29-predictions-run386.md.
#   carry: gpu-bundle-diag/r386 (serving_time, decode_paged_time)
set -uo pipefail
W=/tmp/logs386; rm -rf $W; mkdir -p $W /tmp/b386
for f in gpu-bundle-diag/r386/*.xz; do b=$(basename $f .xz); xz -dc $f > /tmp/b386/$b; chmod +x /tmp/b386/$b; done
S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader > $S
R="--ignored --nocapture --test-threads=1"
timeout 90 /tmp/b386/serving_time $R packed_batch > $W/serving_packed.log 2>&1; echo "serving_time packed rc=$?" >> $S; grep -E "^\|" $W/serving_packed.log | head -8 >> $S
timeout 150 /tmp/b386/decode_paged_time $R > $W/paged.log 2>&1; echo "decode_paged_time rc=$?" >> $S; grep -vE "^(running|test |$)" $W/paged.log | grep -E "us|x" | head -14 >> $S
tar czf $OUT/logs.tgz -C $W .
echo "elapsed ${SECONDS}s" >> $S
cat $S
