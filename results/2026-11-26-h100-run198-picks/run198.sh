#!/usr/bin/env bash
# Run 198 (session 22): after stage 125r made `wgmma` 1-3% faster, every
# tiled variant timed again at the 35 shapes of the measured-winners sets
# where `wgmma` was within 0.93-1.08x of the best other variant (H100 runs
# 126, 127, 160; shapes.txt), for scripts/check-picks.py here; then the
# planted bug (scripts/deliberate-bug.patch, gpu-bundle-bug/gpu_fuzz built
# at fd8e317) under the GPU fuzz, which must fail and shrink; then two
# more rounds of the mission-shape ratio (run 193's loop).
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader | tee $OUT/gpu.txt
D=results/2026-11-26-h100-run198-picks
B=gpu-bundle/bin/sdpa
# shellcheck disable=SC2046
timeout 330 $B bench --variants mma,wgmma,split,split-wg,split-n64 --shapes $(cat $D/shapes.txt) \
  --modes graph --samples 10 --json $OUT/picks.json > $OUT/picks.txt 2>&1
echo "rows ok: $(grep -cE ' ok$' $OUT/picks.txt), FAIL: $(grep -c FAIL $OUT/picks.txt); ${SECONDS}s"
echo "== deliberate bug (scripts/deliberate-bug.patch): the GPU fuzz must fail and shrink"
timeout 150 gpu-bundle-bug/gpu_fuzz --ignored --nocapture --test-threads=1 > $OUT/bug.log 2>&1
grep -E "Test failed|minimal failing|cases passed|test result" $OUT/bug.log | head -20
echo "${SECONDS}s"
for r in 1 2; do
  timeout 60 $B bench --variants split-n64 --shapes 2,8,256,64 1,8,512,64 --modes graph --json $OUT/ours-$r.json | grep -v '^\[' | tail -2
  timeout 120 python3 scripts/peers.py 2,8,256,64 1,8,512,64 > $OUT/peers-$r.jsonl 2>/dev/null
  python3 scripts/peers.py --summarize $OUT/peers-$r.jsonl | grep -E "cudnn|flash" | sort -k3 | head -4
done
echo "elapsed ${SECONDS}s"
