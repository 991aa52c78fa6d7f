#!/usr/bin/env bash
# Run 177 (session 18): stage 119b (warp-private first block by tensor
# copies) against the session's base build, its checks, and its stall counts.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader | tee $OUT/gpu.txt
B=gpu-bundle-diag/r177
mkdir -p $OUT/ab
SHAPES="2,8,256,64 1,8,512,64 1,8,512,64,causal 1,1,1,64 4,8,512,64 1,8,1024,64 2,8,200,64 1,8,2048,64"
OUT=$OUT/ab ROUNDS=5 STEP_TIMEOUT=100 bash scripts/ab-chain.sh split-n64,split "$SHAPES" graph \
  base=$B/sdpa-base wtma=$B/exp/sdpa base2=$B/sdpa-base > $OUT/ab.log 2>&1
tar czf $OUT/ab-json.tgz -C $OUT ab && rm -rf $OUT/ab
echo "A/B: ok $(grep -c ' ok$' $OUT/ab.log), FAIL $(grep -c FAIL $OUT/ab.log)"
R="--ignored --nocapture --test-threads=1"
{ timeout 150 $B/exp/gpu_gate $R; timeout 100 $B/exp/overlap $R; } > $OUT/gate.log 2>&1
grep -E "passed, .* failed|pairs checked|FAIL" $OUT/gate.log | tail -8
timeout 200 $B/exp/gpu_fuzz $R > $OUT/fuzz.log 2>&1; tail -3 $OUT/fuzz.log
SAN=$(mktemp -d); OUT=$SAN BIN=$B/exp SANITIZE_TIMEOUT=120 bash scripts/sanitize.sh racecheck synccheck; cp $SAN/sanitize.log $OUT/
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
S=smsp__average_warps_issue_stalled
M=sm__cycles_active.avg,smsp__inst_executed.sum,${S}_long_scoreboard_per_issue_active.ratio,${S}_barrier_per_issue_active.ratio,${S}_wait_per_issue_active.ratio
for b in $B/sdpa-base $B/exp/sdpa; do echo "== $b 2,8,256,64"; timeout 60 $NCU --clock-control none -k regex:sdpa_split_n64_d -c 1 --launch-skip 3 --metrics $M $b bench --variants split-n64 --shapes 2,8,256,64 --modes direct --samples 1 --launches 4 2>&1 | grep -E "sm__|smsp__"; done > $OUT/stalls.txt 2>&1
cat $OUT/stalls.txt | sed -E 's/smsp__average_warps_issue_stalled_//; s/_per_issue_active.ratio//'
grep -A16 "^variant  shape" $OUT/ab.log | cut -c1-170
