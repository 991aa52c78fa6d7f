#!/usr/bin/env bash
# Run 320 (issue 42): (1) `sdpa bench --layout bshd` (new) beside the
# default layout, both checked against f64 on sampled rows; (2) ncu DRAM
# and L2 bytes of the packed twin built with heads on y (x/heads-y's
# serving_time from run 317) against main's, to tell whether the grid
# order changes its DRAM traffic (run 319: 301 MB against the dense
# kernel's 134).
#   carry: gpu-bundle-diag/r320 (sdpa.xz), gpu-bundle-diag/r317
set -uo pipefail
W=/tmp/logs320; rm -rf $W; mkdir -p $W /tmp/b320
xz -dc gpu-bundle-diag/r320/sdpa.xz > /tmp/b320/sdpa; chmod +x /tmp/b320/sdpa
for f in serving_time_main serving_time_headsy; do xz -dc gpu-bundle-diag/r317/$f.xz > /tmp/b320/$f; chmod +x /tmp/b320/$f; done
S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader > $S
SH="4,16,4096,128 2,8,256,64 1,32:8,1:8192,128"
for L in bhsd bshd; do
  timeout 150 /tmp/b320/sdpa bench --shapes $SH --layout $L --modes graph > $W/bench-$L.log 2> $W/bench-$L.err
  echo "== bench --layout $L rc=$?" >> $S; grep -E "^(wgmma|decode|split|mma)" $W/bench-$L.log | cut -c1-140 >> $S; grep -E "left out" $W/bench-$L.err >> $S
done
R="--ignored --nocapture --test-threads=1"
M=dram__bytes_read.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum,gpu__time_duration.sum,smsp__inst_executed.sum
for x in main headsy; do
  timeout 120 ncu --clock-control none --metrics $M -k "regex:^sdpa_wgmma_packed_d128\$" --launch-count 1 --kill on \
    /tmp/b320/serving_time_$x bshd $R > $W/ncu-$x.txt 2>&1; echo "== ncu packed twin $x rc=$?" >> $S
  grep -E "dram__|lts__|gpu__|smsp__" $W/ncu-$x.txt | sed 's/  */ /g' >> $S
done
tar czf $OUT/logs.tgz -C $W .
echo "elapsed ${SECONDS}s" >> $S
cat $S
