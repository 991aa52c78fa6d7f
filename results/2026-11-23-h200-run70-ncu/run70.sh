#!/usr/bin/env bash
# run 70: ncu source-level stall samples of split (mission shapes) and wgmma (a long D=128 shape) on the record build's kernels
set -uo pipefail
bash scripts/ncu-source.sh 2,8,256,64 m256 split
bash scripts/ncu-source.sh 1,8,512,64 m512 split
bash scripts/ncu-source.sh 4,16,4096,128 long wgmma
