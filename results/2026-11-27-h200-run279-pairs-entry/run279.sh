#!/usr/bin/env bash
# Run 279 (session 32): the pair-row entry of split-n64 D = 64 (stage 168b;
# predictions: results/2026-11-27-predictions-run279.md). The new bundle's
# correctness suites, an A/B chain against 83f9cfa's sdpa, the torch peers.
set -uo pipefail
B=gpu-bundle-diag/r279/bin
bash scripts/device-run.sh unpack gpu-bundle-diag/r279/r279.tar.xz $B
STEP_TIMEOUT=300 bash scripts/device-run.sh checks $B/new
S="2,8,256,64 1,8,512,64 2,8,512,64 1,8,512,64,causal 1,8,448,64 1,8,384,64 1,8,1024,64 1,8,333,64 1,1,1,64"
ROUNDS=8 bash scripts/device-run.sh ab split-n64 "$S" base=$B/base/sdpa new=$B/new/sdpa base2=$B/base/sdpa
bash scripts/device-run.sh peers "2,8,256,64 1,8,512,64"
echo "elapsed ${SECONDS}s"
