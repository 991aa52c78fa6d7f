#!/usr/bin/env bash
# Run 282 (session 32): the merged pair rows (0737421) on an H100
# (predictions: results/2026-11-27-predictions-run282.md): the gate with
# its two new cases, the A/B chain against 83f9cfa's sdpa, the peers.
set -uo pipefail
B=gpu-bundle-diag/r282/bin
bash scripts/device-run.sh unpack gpu-bundle-diag/r282/r282.tar.xz $B
S="2,8,256,64 1,8,512,64 2,8,512,64 1,8,512,64,causal 1,8,448,64 1,8,384,64 1,8,1024,64 1,8,333,64 1,1,1,64"
ROUNDS=6 bash scripts/device-run.sh ab split-n64 "$S" base=$B/base/sdpa new=$B/new/sdpa base2=$B/base/sdpa
bash scripts/device-run.sh peers "2,8,256,64 1,8,512,64"
timeout 360 $B/new/gpu_gate --ignored --nocapture --test-threads=1 > "$OUT/gpu_gate.log" 2>&1; echo "gpu_gate rc=$?"
grep -E "passed, .* failed" "$OUT/gpu_gate.log" | tail -1
grep -E "mission-512|pairs-tail" "$OUT/gpu_gate.log" | cut -c1-150
gzip "$OUT/gpu_gate.log"
echo "elapsed ${SECONDS}s"
