#!/usr/bin/env bash
# Run 288 (session 33): why do pair rows gain? Run 267's ablation ladder
# (ladder-plain.patch: run 267's ladder.patch over 1a2672d, plus
# SDPA_EXP_PLAIN, which keeps the plain kernel where the pair-row one would
# be selected) on the pair and the plain `split-n64` D = 64 kernels at
# shapes that select pairs (predictions:
# results/2026-11-27-predictions-run288.md). e12 ends each block once every
# K/V copy has landed, e13 after the key loop; full is the whole kernel.
# Wrong outputs by design at e12/e13 (AB_TIMES_ONLY). main = run 285's bundle.
set -uo pipefail
tar xJf gpu-bundle-diag/r285/gb.tar.xz
mkdir -p gpu-bundle-diag/r288/x && tar xJf gpu-bundle-diag/r288/r288.tar.xz -C gpu-bundle-diag/r288/x
X=gpu-bundle-diag/r288/x/exp
nvidia-smi --query-gpu=name,serial,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
S="1,8,512,64 2,8,512,64 1,8,448,64"
AB_TIMES_ONLY=1 ROUNDS=3 STEP_TIMEOUT=60 bash scripts/ab-chain.sh split-n64 "$S" graph \
  main=gpu-bundle/bin/sdpa e12p=$X/e12p.sh e12n=$X/e12n.sh e13p=$X/e13p.sh e13n=$X/e13n.sh \
  fullp=$X/sdpa fulln=$X/fulln.sh main2=gpu-bundle/bin/sdpa > "$OUT/ab.log" 2>&1
tail -5 "$OUT/ab.log" | cut -c1-200
tar czf "$OUT/ab.tgz" -C "$OUT" $(cd "$OUT" && ls ab-*.json) && rm -f "$OUT"/ab-*.json
echo "elapsed ${SECONDS}s"
