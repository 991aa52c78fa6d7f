#!/usr/bin/env bash
# Run 80: on top of stage 57 (gpu-bundle-diag/sdpa-base = gpu-bundle/bin/sdpa of 4d.. stage 57):
# stage 58 (four-chain row max/sum: sdpa-chains) and stage 59 (refill one step later, 5 deep: sdpa-lag).
set -uo pipefail
export OUT=${OUT:-gpu-out}
SH="1,8,512,64 8,16,512,64 4,16,1024,64 4,16,1024,128 4,16,2048,64 2,16,8192,64 2,16,8192,64,causal 4,16,4096,128 1,16,16384,128 1,16,16384,128,causal"
for x in chains lag; do
  mkdir -p "$OUT/$x"
  OUT="$OUT/$x" ROUNDS=2 bash scripts/ab-bench.sh gpu-bundle-diag/sdpa-base gpu-bundle-diag/sdpa-$x wgmma "$SH" graph > "$OUT/ab-$x.txt" 2>&1
done
(cd "$OUT" && tar cf ab.tar chains lag && rm -r chains lag)
for x in chains lag; do echo "== $x (old = stage 57)"; grep -A11 "^variant  shape" "$OUT/ab-$x.txt"; done
