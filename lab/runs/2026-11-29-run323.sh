#!/usr/bin/env bash
# Run 323 (issue 41 item 1; issue 42): the release fuzz over every entry
# with the score twins (sm_90a: 28 kernels + 24 window/softcap twins; the
# sm_89 image: 8 + decode's 8), 10,000 cases each; the whole gate after
# stage 178 (every variant), racecheck and synccheck on the packed twins
# (new code: shfl::uniform), device_api. Prepared in session 39, not run
# there (no device time left). Predictions:
# lab/predictions/2026-11-29-predictions-run323.md.
#   carry: gpu-bundle-diag/r323 (gb.tar.xz, built from the commit in COMMIT)
set -uo pipefail
B=gpu-bundle/bin
rm -rf gpu-bundle && mkdir -p gpu-bundle && tar xJf gpu-bundle-diag/r323/gb.tar.xz -C gpu-bundle
W=/tmp/logs323; rm -rf $W; mkdir -p $W
S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader > $S
R="--ignored --nocapture --test-threads=1"
pack() { tar czf $OUT/logs.tgz -C $W . ; }
CS=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
timeout 240 $B/gpu_fuzz_release $R > $W/release.log 2>&1; echo "release sm_90a rc=$?" >> $S
grep -E "cases|FAIL" $W/release.log | tail -60 | head -60 >> $S; pack
timeout 120 env SDPA_IMAGE=sm_89 $B/gpu_fuzz_release $R > $W/release89.log 2>&1; echo "release sm_89 rc=$?" >> $S
grep -E "over .* entries|FAIL" $W/release89.log | head -20 >> $S; pack
( timeout 150 "$CS" --tool racecheck --error-exitcode 9 $B/packed $R > $W/racecheck.log 2>&1; echo "rc=$?" >> $W/racecheck.log ) &
( timeout 150 "$CS" --tool synccheck --error-exitcode 9 $B/packed $R > $W/synccheck.log 2>&1; echo "rc=$?" >> $W/synccheck.log ) &
wait
for f in racecheck synccheck; do echo "$f: $(grep -E 'ERROR SUMMARY|test result' $W/$f.log | tail -2 | tr '\n' ' ') $(tail -1 $W/$f.log)" >> $S; done
pack
timeout 200 $B/gpu_gate $R > $W/gate.log 2>&1; echo "gate rc=$? $(grep -E 'passed, .* failed' $W/gate.log | tail -1)" >> $S
timeout 90 $B/device_api $R > $W/api.log 2>&1; echo "device_api rc=$? $(grep -E 'test result' $W/api.log | tail -1)" >> $S
pack
echo "elapsed ${SECONDS}s" >> $S
cat $S
