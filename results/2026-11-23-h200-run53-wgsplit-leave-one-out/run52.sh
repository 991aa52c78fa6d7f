#!/usr/bin/env bash
# run 52: wgsplit leave-one-out (0 nothing, 1 transpose+fence+bar, 2 QK, 3 PV, 4 softmax, 5 merge, 6 proxy fences)
SH="1,1,1,64 1,1,256,64 2,8,256,64 1,8,512,64 4,16,2048,64"
for n in 0 1 2 3 4 5 6 0; do
  echo "== LEAVE_OUT $n"
  gpu-bundle-diag/wg-$n bench --variants wgsplit --shapes $SH --modes graph 2>&1 | grep "^wgsplit" || true
done
gpu-bundle-diag/wg-0 bench --variants wgmma,split,mma --shapes 1,1,1,64 --modes graph,direct 2>&1 | grep -E "^(wgmma|split|mma) "
