#!/usr/bin/env bash
# Run 372 (issue 39, stage 193's final build): the window suite and the
# score twins' times (old = stage 192's build, two rounds).
# Predictions: lab/predictions/2026-11-29-predictions-run372.md.
#   carry: gpu-bundle-diag/r372 (sdpa, old-sdpa = run 368's new, window)
set -uo pipefail
W=/tmp/logs372; rm -rf $W; mkdir -p $W /tmp/b372
for f in gpu-bundle-diag/r372/*.xz; do b=$(basename $f .xz); xz -dc $f > /tmp/b372/$b; chmod +x /tmp/b372/$b; done
S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader > $S
R="--ignored --nocapture --test-threads=1"
b() { timeout 40 /tmp/b372/$1 bench --modes graph "${@:2}" 2>&1 | grep -E "^wgmma" | awk '{print $1, $2, $5}' | tr '\n' ';'; }
for round in 1 2; do
  for x in old-sdpa sdpa; do
    echo "== $x $round" >> $S
    echo "window $(b $x --shapes 1,16,16384,128,causal --variants wgmma,wgmma-fp8pv --window 1024,0)" >> $S
    echo "softcap $(b $x --shapes 4,16,4096,128 --variants wgmma,wgmma-fp8pv --softcap 30)" >> $S
  done
done
timeout 90 /tmp/b372/window $R > $W/window.log 2>&1; echo "window rc=$? $(grep -E 'test result' $W/window.log | tail -1)" >> $S
grep -E "panicked|FAIL" $W/window.log | head -3 >> $S
tar czf $OUT/logs.tgz -C $W .
echo "elapsed ${SECONDS}s" >> $S
cat $S
