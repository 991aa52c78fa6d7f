#!/usr/bin/env bash
# Run 103 (stages 71-73): a chain of four split builds timed in turns, 2 rounds, graph mode:
# s70 = 4732406 (K/V by tensor copies), s71 = d099abc (+ Q by a tensor copy),
# s72 = 7444e6c (+ first key block peeled), s73 = gpu-bundle (1dace01: + fused exponent);
# then gate + overlap + GPU fuzz on the s73 bundle.
set -uo pipefail
export OUT=${OUT:-gpu-out} STEP_TIMEOUT=240
D=gpu-bundle-diag/r103
OUT="$OUT" ROUNDS=2 bash scripts/ab-chain.sh split \
  "2,8,256,64 1,8,512,64 1,1,1,64 1,1,256,64 1,8,1024,64 4,8,512,64 2,8,200,64 1,8,512,64,causal 2,8,256,128 1,8,512,128 1,4,1024,128 4,16,2048,64" graph \
  s70=$D/sdpa-s70 s71=$D/sdpa-s71 s72=$D/sdpa-s72 s73=gpu-bundle/bin/sdpa > "$OUT/ab.txt" 2>&1
(cd "$OUT" && tar cf ab.tar ab-*.json && rm ab-*.json)
bash scripts/gpu-run.sh gate fuzz > "$OUT/run.txt" 2>&1
grep -E "passed|failed|FAIL|pairs checked|test result" "$OUT/run.txt" | tail -8
grep -v "^\[" "$OUT/ab.txt" | grep -vE "^== round|^ *$" | tail -14
