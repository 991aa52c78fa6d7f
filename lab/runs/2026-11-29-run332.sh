#!/usr/bin/env bash
# Run 332 (issue 41 item 5): branch h/quant-ffma (the Hadamard's shuffled
# stages as one FMA, the norm once per amax) against main's quantizer: bits
# on both images, then the time tables alternated.
# Predictions: lab/predictions/2026-11-29-predictions-run332.md.
#   carry: gpu-bundle-diag/r332 (ffma-quantizer_gpu from the branch,
#   main-quantizer_gpu from d3a9fe7)
set -uo pipefail
W=/tmp/logs332; rm -rf $W; mkdir -p $W /tmp/b332
for f in gpu-bundle-diag/r332/*.xz; do b=$(basename $f .xz); xz -dc $f > /tmp/b332/$b; chmod +x /tmp/b332/$b; done
S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader > $S
R="--ignored --nocapture --test-threads=1"
for img in sm_90a sm_89; do
  timeout 90 env SDPA_IMAGE=$img /tmp/b332/ffma-quantizer_gpu $R codes_and_scales three_tensors bad_inputs > $W/bits-$img.log 2>&1
  echo "bits $img rc=$? $(grep -E 'test result' $W/bits-$img.log | tail -1)" >> $S; grep -E "configurations|launches|panicked" $W/bits-$img.log >> $S
done
for x in main ffma main ffma; do
  timeout 60 /tmp/b332/$x-quantizer_gpu $R quantizer_time > $W/time-$x.log 2>&1
  echo "== $x rc=$?" >> $S; grep -E "^\| [0-9]" $W/time-$x.log >> $S
done
tar czf $OUT/logs.tgz -C $W .
echo "elapsed ${SECONDS}s" >> $S
cat $S
