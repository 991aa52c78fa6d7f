#!/usr/bin/env bash
# Run 206 (session 23): stage 134, persistent `wgmma` D = 64 (experiment
# build in gpu-bundle-diag/r206/exp; SDPA_PERSIST=0 there gives one tile
# per block, `sdpa-p0`). `run206.sh checks`: the experiment's gate,
# overlap and GPU fuzz (also with at most 3 blocks); `run206.sh ab`: the
# A/B chain base -> persist -> p0 -> base2.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader | tee $OUT/gpu.txt
B=gpu-bundle-diag/r206
R="--ignored --nocapture --test-threads=1"
if [ "${1:-}" = checks ]; then
{ timeout 150 $B/exp/gpu_gate $R; timeout 60 $B/exp/overlap $R; timeout 100 $B/exp/gpu_fuzz $R;
  echo "== SDPA_PERSIST_GRID=3"
  SDPA_PERSIST_GRID=3 timeout 150 $B/exp/gpu_gate $R; SDPA_PERSIST_GRID=3 timeout 100 $B/exp/gpu_fuzz $R; } > $OUT/checks.log 2>&1
grep -E "test result|pairs checked|passed, .* failed|FAIL|panicked|SDPA_PERSIST" $OUT/checks.log | tail -12
echo "checks ${SECONDS}s"
exit 0
fi
mkdir -p $OUT/ab
SHAPES="8,16,512,64 16,16,256,64 64,16,128,64 4,16,1024,64 4,16,2048,64 2,16,8192,64 2,16,8192,64,causal 1,8,2048,64 4,16,4096,128"
OUT=$OUT/ab ROUNDS=3 STEP_TIMEOUT=100 bash scripts/ab-chain.sh wgmma "$SHAPES" graph \
  base=$B/sdpa-base persist=$B/exp/sdpa p0=$B/sdpa-p0 base2=$B/sdpa-base > $OUT/ab.log 2>&1
tar czf $OUT/ab-json.tgz -C $OUT ab && rm -rf $OUT/ab
echo "A/B: ok $(grep -c ' ok$' $OUT/ab.log), FAIL $(grep -c FAIL $OUT/ab.log); ${SECONDS}s"
grep -A14 "^variant  shape" $OUT/ab.log | cut -c1-170
echo "elapsed ${SECONDS}s"
