#!/usr/bin/env bash
# run 87: the final commit's bundle (host: kv_tiles scratch only for kernels with a prepass): gate + overlap + GPU fuzz,
# adversarial, determinism; the 8 issue shapes once more (graph).
set -uo pipefail
export STEP_TIMEOUT=240
bash scripts/gpu-run.sh gate fuzz > /tmp/run.txt 2>&1
R="--ignored --nocapture --test-threads=1"
{ for t in adversarial determinism; do echo "== $t"; timeout 240 gpu-bundle/bin/$t $R 2>&1 | tail -6; done; } > "$OUT/adv.log" 2>&1
timeout 240 gpu-bundle/bin/sdpa bench --variants mma,wgmma,split --modes graph --json $OUT/bench-mma.json > $OUT/bench.txt 2>&1
grep -E "passed|failed|FAIL" /tmp/run.txt | tail -5
grep -E "passed|failed|FAIL" $OUT/adv.log
grep -v '^\[' $OUT/bench.txt | awk '{print $1, $2, $4, $7}'
