#!/usr/bin/env bash
# Run 102 (stage 70): split's K/V by tensor copies (gpu-bundle, this commit) against bbd9e2a's
# build (gpu-bundle-diag/r102/sdpa-old): gate + overlap + GPU fuzz on the new build, then a
# same-run A/B of split, graph mode, 2 rounds.
set -uo pipefail
export OUT=${OUT:-gpu-out} STEP_TIMEOUT=240
bash scripts/gpu-run.sh gate fuzz > "$OUT/run.txt" 2>&1
OUT="$OUT" ROUNDS=2 bash scripts/ab-bench.sh gpu-bundle-diag/r102/sdpa-old gpu-bundle/bin/sdpa split \
  "2,8,256,64 1,8,512,64 1,1,1,64 1,1,256,64 1,8,1024,64 4,8,512,64 2,8,200,64 1,8,512,64,causal 2,8,256,128 1,8,512,128 1,4,1024,128 4,16,2048,64" graph > "$OUT/ab.txt" 2>&1
(cd "$OUT" && tar cf ab.tar ab-*.json && rm ab-*.json)
grep -E "passed|failed|FAIL|pairs checked|test result" "$OUT/run.txt" | tail -8
grep -v "^\[" "$OUT/ab.txt" | grep -vE "^== round|^ *$" | tail -14
