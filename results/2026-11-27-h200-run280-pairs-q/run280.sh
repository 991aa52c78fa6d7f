#!/usr/bin/env bash
# Run 280 (session 32): the pair-row entry with Q in pair rows (stage 168c;
# predictions: results/2026-11-27-predictions-run280.md): an A/B chain
# against 83f9cfa's sdpa and the torch peers. Run 281 adds the new
# bundle's correctness suites (STEP_TIMEOUT=300 ... checks $B/new) to it.
set -uo pipefail
B=gpu-bundle-diag/r280/bin
bash scripts/device-run.sh unpack gpu-bundle-diag/r280/r280.tar.xz $B
S="2,8,256,64 1,8,512,64 2,8,512,64 1,8,512,64,causal 1,8,448,64 1,8,384,64 1,8,1024,64 1,8,333,64 1,1,1,64"
ROUNDS=8 bash scripts/device-run.sh ab split-n64 "$S" base=$B/base/sdpa new=$B/new/sdpa base2=$B/base/sdpa
bash scripts/device-run.sh peers "2,8,256,64 1,8,512,64"
echo "elapsed ${SECONDS}s"
