#!/usr/bin/env bash
# run 58: split prologue floors: 1 locate + zero output, 2 prologue copies landed (Q + 2 K/V stages), 4 Q + stage 0 only, 5 Q only
for r in 1 2; do
for n in 1 2 4 5; do
  echo "== round $r FLOOR $n"
  gpu-bundle-diag/floor-$n bench --variants split --shapes 1,1,256,64 1,2,256,64 2,8,256,64 1,8,512,64 --modes graph 2>&1 | grep "^split" || true
done
done
