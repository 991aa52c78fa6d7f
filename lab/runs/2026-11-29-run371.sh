#!/usr/bin/env bash
# Run 371 (issue 39, stage 193): the D = 128 score twins warp-specialized;
# old (stage 192's build) against new on windowed, capped and plain
# shapes; the window suite; the wgmma gate.
# Predictions: lab/predictions/2026-11-29-predictions-run371.md.
#   carry: gpu-bundle-diag/r371 (sdpa, old-sdpa = run 368's new, window, gpu_gate)
set -uo pipefail
W=/tmp/logs371; rm -rf $W; mkdir -p $W /tmp/b371
for f in gpu-bundle-diag/r371/*.xz; do b=$(basename $f .xz); xz -dc $f > /tmp/b371/$b; chmod +x /tmp/b371/$b; done
S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader > $S
R="--ignored --nocapture --test-threads=1"
pack() { tar czf $OUT/logs.tgz -C $W . ; }
b() { timeout 40 /tmp/b371/$1 bench --modes graph "${@:2}" 2>&1 | grep -E "^wgmma" | awk '{print $1, $2, $5}' | tr '\n' ';'; }
for round in 1 2 3; do
  for x in old-sdpa sdpa; do
    echo "== $x $round" >> $S
    echo "plain $(b $x --shapes 4,16,4096,128 1,16,16384,128 --variants wgmma,wgmma-fp8pv)" >> $S
    echo "window $(b $x --shapes 1,16,16384,128,causal --variants wgmma,wgmma-fp8pv --window 1024,0)" >> $S
    echo "softcap $(b $x --shapes 4,16,4096,128 --variants wgmma,wgmma-fp8pv --softcap 30)" >> $S
  done
done
pack
timeout 90 /tmp/b371/window $R > $W/window.log 2>&1; echo "window rc=$? $(grep -E 'test result' $W/window.log | tail -1)" >> $S
grep -E "panicked|FAIL" $W/window.log | head -3 >> $S
pack
timeout 150 env SDPA_GATE_VARIANTS=wgmma /tmp/b371/gpu_gate $R > $W/gate.log 2>&1; echo "gate wgmma rc=$? $(grep -E 'passed, .* failed' $W/gate.log | tail -1) FAIL lines: $(grep -c FAIL $W/gate.log)" >> $S
pack
echo "elapsed ${SECONDS}s" >> $S
cat $S
