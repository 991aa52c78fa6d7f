#!/usr/bin/env bash
# Run 319 (issue 42): where the packed twin's extra DRAM traffic and
# instructions come from (run 318: +46M instructions, +7.7M branches, L2
# hit 78% against 91%, DRAM ~362 MB against ~190 MB): DRAM and L2 bytes
# by direction, L1 global sectors, and the warps' stall reasons, on one
# launch each at (4,16,4096,128) wgmma.
#   carry: gpu-bundle-diag/r317 (serving_time_main.xz)
set -uo pipefail
W=/tmp/logs319; rm -rf $W; mkdir -p $W /tmp/b319
xz -dc gpu-bundle-diag/r317/serving_time_main.xz > /tmp/b319/st; chmod +x /tmp/b319/st
S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader > $S
R="--ignored --nocapture --test-threads=1"
M=dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_op_read.sum,lts__t_sectors_op_write.sum,lts__t_sectors_op_read_lookup_miss.sum,lts__t_sectors_op_write_lookup_miss.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,smsp__inst_executed.sum,smsp__inst_executed_op_branch.sum,sm__cycles_active.avg
for k in sdpa_wgmma_d128 sdpa_wgmma_packed_d128; do
  timeout 200 ncu --clock-control none --metrics $M --section WarpStateStats --print-details all -k "regex:^$k\$" --launch-count 1 --kill on \
    /tmp/b319/st bshd $R > $W/$k.txt 2> $W/$k.err; echo "== $k ncu rc=$?" >> $S
  cp $W/$k.txt $OUT/ 2>/dev/null
  grep -E "dram__|lts__|l1tex__|smsp__inst|sm__cycles|Stall|stall" $W/$k.txt | sed 's/  */ /g' | head -40 >> $S
done
echo "elapsed ${SECONDS}s" >> $S
cat $S
