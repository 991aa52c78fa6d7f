#!/usr/bin/env bash
# Run 328 (issue 41 item 5): tiles of 8 steps (16 KiB of f16, half the
# tickets) against run 327's best (4 steps, LAG_BYTES 16 MiB): bits and
# memcheck of the new tiles, then the time tables alternated.
# Predictions: lab/quantizer.md, step 5 (after run 327).
#   carry: gpu-bundle-diag/r326
set -uo pipefail
W=/tmp/logs328; rm -rf $W; mkdir -p $W /tmp/b328
for f in gpu-bundle-diag/r326/*lag16-quantizer_gpu.xz gpu-bundle-diag/r326/t8lag32-quantizer_gpu.xz; do b=$(basename $f .xz); xz -dc $f > /tmp/b328/$b; chmod +x /tmp/b328/$b; done
S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader > $S
R="--ignored --nocapture --test-threads=1"
CS=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
timeout 90 /tmp/b328/t8lag16-quantizer_gpu $R codes_and_scales three_tensors bad_inputs > $W/bits.log 2>&1
echo "bits rc=$? $(grep -E 'test result' $W/bits.log | tail -1)" >> $S; grep -E "configurations|launches|panicked" $W/bits.log >> $S
timeout 120 "$CS" --tool memcheck --error-exitcode 9 /tmp/b328/t8lag16-quantizer_gpu $R codes_and_scales three_tensors > $W/memcheck.log 2>&1
echo "memcheck rc=$? $(grep -E 'ERROR SUMMARY' $W/memcheck.log | tail -1)" >> $S
for x in lag16 t8lag16 t8lag32 lag16 t8lag16; do
  timeout 60 /tmp/b328/$x-quantizer_gpu $R quantizer_time > $W/time-$x.log 2>&1
  echo "== $x rc=$?" >> $S; grep -E "^\| [0-9]" $W/time-$x.log >> $S
done
tar czf $OUT/logs.tgz -C $W .
echo "elapsed ${SECONDS}s" >> $S
cat $S
