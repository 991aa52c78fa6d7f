#!/usr/bin/env bash
# Run 364 (issues 39, 41): the suites that run every kernel of the table
# (adversarial inputs, determinism, overlap) on the final build of the
# session (stage 189's first-block change in the 192-key kernel).
# Predictions: lab/predictions/2026-11-29-predictions-run364.md.
#   carry: gpu-bundle-diag/r364 (adversarial, determinism, overlap)
set -uo pipefail
W=/tmp/logs364; rm -rf $W; mkdir -p $W /tmp/b364
for f in gpu-bundle-diag/r364/*.xz; do b=$(basename $f .xz); xz -dc $f > /tmp/b364/$b; chmod +x /tmp/b364/$b; done
S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader > $S
R="--ignored --nocapture --test-threads=1"
pack() { tar czf $OUT/logs.tgz -C $W . ; }
for t in adversarial determinism overlap; do
  timeout 80 /tmp/b364/$t $R > $W/$t.log 2>&1; echo "$t rc=$? $(grep -E 'test result' $W/$t.log | tail -1)" >> $S
  grep -E "panicked|FAIL" $W/$t.log | head -3 >> $S
  pack
done
echo "elapsed ${SECONDS}s" >> $S
cat $S
