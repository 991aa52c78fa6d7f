#!/usr/bin/env bash
# Run 84: wgmma D=64 with 64-row blocks, four per SM (sdpa-d64r64, stage 62), A/B vs 4b671ed (sdpa-base).
set -uo pipefail
export OUT=${OUT:-gpu-out}
SH="1,8,512,64 8,16,512,64 4,16,1024,64 4,16,2048,64 2,16,8192,64 2,16,8192,64,causal 1,8,1536,64 1,12,1024,64"
for x in d64r64; do
  mkdir -p "$OUT/$x"
  OUT="$OUT/$x" ROUNDS=2 bash scripts/ab-bench.sh gpu-bundle-diag/sdpa-base gpu-bundle-diag/sdpa-$x wgmma "$SH" graph > "$OUT/ab-$x.txt" 2>&1
done
(cd "$OUT" && tar cf ab.tar d64r64 && rm -r d64r64)
for x in d64r64; do echo "== $x (old = 4b671ed)"; grep -A9 "^variant  shape" "$OUT/ab-$x.txt"; done
