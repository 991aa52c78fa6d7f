#!/usr/bin/env bash
# Run 223 (session 25): stage 145's build a (gpu-bundle-diag/r222/a)
# against `split-wg` and `wgmma` at multi-round D = 64 shapes, then a's
# checks; the first run of scripts/device-run.sh.
set -uo pipefail
A=gpu-bundle-diag/r222/a
SHAPES="1,8,1024,64 4,8,512,64 2,8,512,64 1,8,2048,64 2,8,1024,64 8,8,256,64 4,8,256,64 1,16,1024,64"
bash scripts/device-run.sh ab split-wg,wgmma,split-n64 "$SHAPES" base=gpu-bundle/bin/sdpa a=$A/sdpa base2=gpu-bundle/bin/sdpa
bash scripts/device-run.sh checks $A
echo "elapsed ${SECONDS}s"
