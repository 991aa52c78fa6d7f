#!/usr/bin/env bash
# Run 338 (issue 42 item 5): the strides suite under compute-sanitizer
# memcheck, and the fused_qkv example.
# Predictions: lab/predictions/2026-11-29-predictions-run338.md.
#   carry: gpu-bundle-diag/r338 (strides from r335's build, fused_qkv)
set -uo pipefail
W=/tmp/logs338; rm -rf $W; mkdir -p $W /tmp/b338
for f in gpu-bundle-diag/r338/*.xz; do b=$(basename $f .xz); xz -dc $f > /tmp/b338/$b; chmod +x /tmp/b338/$b; done
S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader > $S
R="--ignored --nocapture --test-threads=1"
CS=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
timeout 300 env PROPTEST_CASES=8 "$CS" --tool memcheck --error-exitcode 9 /tmp/b338/strides $R > $W/memcheck.log 2>&1
echo "memcheck strides rc=$? $(grep -E 'ERROR SUMMARY|test result' $W/memcheck.log | tail -2 | tr '\n' ' ')" >> $S
timeout 60 /tmp/b338/fused_qkv > $W/fused.log 2>&1; echo "fused_qkv rc=$? $(tail -1 $W/fused.log)" >> $S
tar czf $OUT/logs.tgz -C $W .
echo "elapsed ${SECONDS}s" >> $S
cat $S
