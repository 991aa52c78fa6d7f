#!/usr/bin/env bash
# run 57: split floors: 0 the kernel, 1 exit after locating the block (zero output), 2 after the prologue copies landed, 3 prologue + merge (no key loop)
for r in 1 2; do
for n in 0 1 2 3; do
  echo "== round $r FLOOR $n"
  gpu-bundle-diag/floor-$n bench --variants split --shapes 1,1,1,64 2,8,256,64 1,8,512,64 2,8,256,128 --modes graph,graph-overlap 2>&1 | grep "^split" || true
done
done
