#!/usr/bin/env bash
# Run 324 (issue 42): branch h/decode-window-splits (decode's window twins
# split the window's keys, not the cache's): its window tests, device_api
# and decode gate, then `sdpa bench --variants decode --window 1024,0`
# against main's sdpa (run 323's bundle) in the same call, alternated.
# Predictions: lab/predictions/2026-11-29-predictions-run324.md.
#   carry: gpu-bundle-diag/r324 (the branch's binaries), gpu-bundle-diag/r323 (main's bundle)
set -uo pipefail
W=/tmp/logs324; rm -rf $W; mkdir -p $W /tmp/b324 /tmp/main323
for b in window device_api gpu_gate sdpa; do xz -dc gpu-bundle-diag/r324/$b.xz > /tmp/b324/$b; chmod +x /tmp/b324/$b; done
tar xJf gpu-bundle-diag/r323/gb.tar.xz -C /tmp/main323 ./bin/sdpa
S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader > $S
R="--ignored --nocapture --test-threads=1"
timeout 150 /tmp/b324/window $R > $W/window.log 2>&1; echo "window rc=$? $(grep -E 'test result' $W/window.log | tail -1)" >> $S
timeout 90 /tmp/b324/device_api $R > $W/api.log 2>&1; echo "device_api rc=$? $(grep -E 'test result' $W/api.log | tail -1)" >> $S
timeout 120 env SDPA_GATE_VARIANTS=decode /tmp/b324/gpu_gate $R > $W/gate.log 2>&1; echo "gate decode rc=$? $(grep -E 'passed, .* failed' $W/gate.log | tail -1)" >> $S
SH="8,32:8,1:32768,128 64,32:8,1:8192,128 1,32:8,1:4096,128"
for round in 1 2; do
  for x in branch main; do
    bin=/tmp/b324/sdpa; [ $x = main ] && bin=/tmp/main323/bin/sdpa
    timeout 90 $bin bench --shapes $SH --variants decode --window 1024,0 --modes graph > $W/bench-$x-$round.log 2>&1
    echo "== $x round $round rc=$?" >> $S; grep -E "^decode" $W/bench-$x-$round.log | cut -c1-110 >> $S
  done
done
tar czf $OUT/logs.tgz -C $W .
echo "elapsed ${SECONDS}s" >> $S
cat $S
