#!/usr/bin/env bash
# Run 215 (session 24): the `kv_tiles` D = 64 shared-memory plan without
# its unused K image (12,296 -> 8,200 B; stage 141) on this tree's bundle:
# the gate, overlap and GPU fuzz, then an A/B of `wgmma` D = 64 against
# stage 138's build (gpu-bundle-diag/r211/lazy/sdpa: the same kernels but
# for the prepass's barrier offset), chain base -> kv -> base2.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader | tee $OUT/gpu.txt
R="--ignored --nocapture --test-threads=1"
for t in gpu_gate overlap gpu_fuzz; do
  timeout 150 gpu-bundle/bin/$t $R > $OUT/$t.log 2>&1; echo "$t rc=$?"
  grep -E "test result|pairs checked|passed, .* failed|FAIL|panicked" $OUT/$t.log | tail -3
done
mkdir -p $OUT/ab
OUT=$OUT/ab ROUNDS=3 STEP_TIMEOUT=100 bash scripts/ab-chain.sh wgmma "8,16,512,64 4,16,1024,64 4,16,2048,64 1,8,2048,64" graph \
  base=gpu-bundle-diag/r211/lazy/sdpa kv=gpu-bundle/bin/sdpa base2=gpu-bundle-diag/r211/lazy/sdpa > $OUT/ab.log 2>&1
tar czf $OUT/ab-json.tgz -C $OUT ab && rm -rf $OUT/ab
grep -A5 "^variant  shape" $OUT/ab.log | cut -c1-150
echo "elapsed ${SECONDS}s"
