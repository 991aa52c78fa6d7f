#!/usr/bin/env bash
# Run 281 (session 32): stage 168c's replication (predictions:
# results/2026-11-27-predictions-run280.md): the new bundle's correctness
# suites, the A/B chain of run 280 again, the torch peers.
set -uo pipefail
B=gpu-bundle-diag/r280/bin
bash scripts/device-run.sh unpack gpu-bundle-diag/r280/r280.tar.xz $B
S="2,8,256,64 1,8,512,64 2,8,512,64 1,8,512,64,causal 1,8,448,64 1,8,384,64 1,8,1024,64 1,8,333,64 1,1,1,64"
ROUNDS=8 bash scripts/device-run.sh ab split-n64 "$S" base=$B/base/sdpa new=$B/new/sdpa base2=$B/base/sdpa
bash scripts/device-run.sh peers "2,8,256,64 1,8,512,64"
STEP_TIMEOUT=300 bash scripts/device-run.sh checks $B/new
echo "elapsed ${SECONDS}s"
