#!/usr/bin/env bash
# Run 79: stage 57 (wgmma lazy maxima + rescale vote; gpu-bundle = this build):
# gate + overlap + GPU fuzz, adversarial, determinism; A/B vs stage 51 (gpu-bundle-diag/sdpa-base), 2 rounds.
set -uo pipefail
export OUT=${OUT:-gpu-out}
STEP_TIMEOUT=300 bash scripts/gpu-run.sh gate fuzz > "$OUT/run.log" 2>&1
R="--ignored --nocapture --test-threads=1"
{ for t in adversarial determinism; do echo "== $t"; timeout 240 gpu-bundle/bin/$t $R 2>&1 | tail -8; done; } > "$OUT/adv.log" 2>&1
SH="1,8,512,64 8,16,512,64 4,16,1024,64 4,16,1024,128 4,16,2048,64 2,16,8192,64 2,16,8192,64,causal 4,16,4096,128 1,16,16384,128 1,16,16384,128,causal"
mkdir -p "$OUT/ab"
OUT="$OUT/ab" ROUNDS=2 bash scripts/ab-bench.sh gpu-bundle-diag/sdpa-base gpu-bundle/bin/sdpa wgmma "$SH" graph > "$OUT/ab.txt" 2>&1
(cd "$OUT" && tar cf ab.tar ab && rm -r ab)
grep -E "passed|failed|FAIL" "$OUT/run.log" | tail -8
grep -E "passed|failed|FAIL|test result" "$OUT/adv.log"
grep -A12 "^variant  shape" "$OUT/ab.txt"
