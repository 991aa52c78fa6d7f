#!/usr/bin/env bash
# Run 233 (session 26): stage 149b, where `wgmma-fp8pv`'s per-block sum
# products stand in the key loop's tensor queue: after P·V (run 232's
# `sums`), before it in the same group (`first`), or in the Q·K^T group of
# the next block (`sgroup`). A/B chain base -> sums -> first -> sgroup ->
# base2 (predictions: results/2026-11-26-predictions-run233.md).
set -uo pipefail
E=gpu-bundle-diag/r233
LONG="1,16,16384,128 4,16,4096,128 4,16,4096,128,causal 1,16,16384,128,causal 2,16,8192,64 4,16,2048,64 2,16,8192,64,causal 4,16,1024,128"
ROUNDS=3 STEP_TIMEOUT=200 bash scripts/device-run.sh ab wgmma-fp8pv "$LONG" base=$E/sdpa-base sums=$E/sdpa-sums first=$E/sdpa-first sgroup=$E/sdpa-sgroup base2=$E/sdpa-base
echo "elapsed ${SECONDS}s"
