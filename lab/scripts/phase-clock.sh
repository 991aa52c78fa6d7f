#!/usr/bin/env bash
# Phase clock diagnostic of `split`: each warp records %clock at the phase
# boundaries of a call (prologue, each key step, merge) and writes them over
# its block's output rows (the outputs are wrong by design); the patched
# `sdpa run` times 100 back-to-back launches from a CUDA graph (as `sdpa
# bench` does) and keeps the last one's output; lab/scripts/phase-clock.py
# reports per-phase cycles (median, p10, p90 over warps).
#
# Read it as the instrumented kernel's timeline, not the real one's: the
# stamps stay in registers (constant indices only), but each "ready" mark
# waits for its value, so the build takes ~9% longer per call (4.57 vs 4.18
# us at (2,8,256,64), H200 run 66; before, with the stamps in local memory,
# ~1.8x, and three predictions made from its phases missed: lab/STAGES.md
# stages 29, 31, 32). Use it to locate time; an A/B run decides. Its
# first stamp comes after the kernel's first parameter reads (ptxas orders
# them first), so the constant-cache misses at a block's start (~8% of
# split's samples in ncu, stage 49) are not in its timeline.
#
#   here:             lab/scripts/phase-clock.sh build    (-> gpu-bundle-diag/sdpa-phase)
#   on the GPU:       lab/scripts/phase-clock.sh run ["SHAPES"]   (carry gpu-bundle-diag)
#                     (VARIANT=split-n64 for that variant; PHASE_BIN for
#                     another place of the build)
set -euo pipefail
cd "$(dirname "$0")/../.."
case ${1:-} in
  build)
    git diff --quiet -- kernels-gpu host || { echo "phase-clock: kernels-gpu or host has local changes" >&2; exit 2; }
    git apply lab/patches/phase-clock.patch
    trap 'git checkout -- kernels-gpu host' EXIT
    mkdir -p gpu-bundle-diag
    cargo build --release -q -p sdpa --bin sdpa
    cp target/release/sdpa gpu-bundle-diag/sdpa-phase ;;
  run)
    SHAPES=${2:-"1,8,512,64 2,8,256,64 1,1,512,64 1,8,128,64"}
    tmp=$(mktemp -d)
    for s in $SHAPES; do
      python3 lab/scripts/phase-clock.py input "$s" "$tmp/in.safetensors"
      "${PHASE_BIN:-gpu-bundle-diag/sdpa-phase}" run --variant "${VARIANT:-split}" -i "$tmp/in.safetensors" -o "$tmp/out.safetensors" | grep "^phase clock"
      python3 lab/scripts/phase-clock.py report "$s" "$tmp/out.safetensors"
      echo
    done ;;
  *)
    echo "usage: lab/scripts/phase-clock.sh build | run [\"SHAPES\"]" >&2
    exit 2 ;;
esac
