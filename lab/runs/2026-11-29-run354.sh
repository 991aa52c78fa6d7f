#!/usr/bin/env bash
# Run 354: the score twins of every variant that has them, timed under
# sliding windows of 128 to 4096 keys (causal), at D = 64 and 128.
# Predictions: lab/predictions/2026-11-29-predictions-run354.md.
#   carry: gpu-bundle-diag/r351 (sdpa)
set -uo pipefail
W=/tmp/logs354; rm -rf $W; mkdir -p $W /tmp/b354
xz -dc gpu-bundle-diag/r351/sdpa.xz > /tmp/b354/sdpa; chmod +x /tmp/b354/sdpa
S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader > $S
V=mma,split,split-n64,wgmma,wgmma-fp8pv
D128="1,16,4096,128,causal 4,16,2048,128,causal 1,16,16384,128,causal"
D64="1,16,4096,64,causal 4,16,2048,64,causal 2,16,8192,64,causal"
for w in 128 512 1024 4096; do
  timeout 100 /tmp/b354/sdpa bench --shapes $D128 $D64 --window=$w,0 --variants $V --modes graph --samples 5 > $W/bench-$w.log 2>&1
  echo "== window $w,0 rc=$?" >> $S; grep -E "^(mma|split|split-n64|wgmma|wgmma-fp8pv) " $W/bench-$w.log | awk '{print $1, $2, $5, $NF}' >> $S
  tar czf $OUT/logs.tgz -C $W .
done
echo "elapsed ${SECONDS}s" >> $S
cat $S
