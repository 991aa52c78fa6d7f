#!/usr/bin/env bash
# Run 161 (session 17): the GPU correctness gate, overlapped launches, GPU
# fuzz, adversarial and determinism suites on HEAD's bundle (no kernel
# changed since record -14; the cost model's split-n64 D = 64 coefficients
# did, stage 109).
set -uo pipefail
STEP_TIMEOUT=200 bash scripts/gpu-run.sh gate fuzz
R="--ignored --nocapture --test-threads=1"
for t in adversarial determinism; do echo "== $t"; timeout 200 gpu-bundle/bin/$t $R 2>&1 | tail -4; done | tee $OUT/suites.log
# Outcome (H100, 105 s): gpu_gate 378 passed, 0 failed; overlap 24 (kernel,
# shape) pairs, 0 failed; GPU fuzz ok (every entry, 128 cases each);
# adversarial ok; determinism ok. Logs next to this script.
