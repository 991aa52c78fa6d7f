#!/usr/bin/env bash
# Run 325: (1) run 324's benches, which its call's time limit cut:
# `sdpa bench --variants decode --window 1024,0`, the merged branch
# (r324's sdpa) against main before it (r323's), alternated twice;
# (2) the quantizer's speed script with its two ncu profiles (issue 41
# item 5: why 1.2-1.5 TB/s); (3) where the small decode's 7.6 us go
# (issue 42): ncu durations of each kernel one decode call launches at
# (1,32:8,1:4096,128), beside the bench's graph-replay time.
# Predictions: lab/predictions/2026-11-29-predictions-run325.md.
#   carry: gpu-bundle-diag/r324, gpu-bundle-diag/r323
set -uo pipefail
W=/tmp/logs325; rm -rf $W; mkdir -p $W /tmp/b324 /tmp/main323
for b in sdpa; do xz -dc gpu-bundle-diag/r324/$b.xz > /tmp/b324/$b; chmod +x /tmp/b324/$b; done
tar xJf gpu-bundle-diag/r323/gb.tar.xz -C /tmp/main323
S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader > $S
pack() { tar czf $OUT/logs.tgz -C $W . ; }
SH="8,32:8,1:32768,128 64,32:8,1:8192,128 1,32:8,1:4096,128"
for round in 1 2; do
  for x in branch main; do
    bin=/tmp/b324/sdpa; [ $x = main ] && bin=/tmp/main323/bin/sdpa
    timeout 60 $bin bench --shapes $SH --variants decode --window 1024,0 --modes graph > $W/bench-$x-$round.log 2>&1
    echo "== $x round $round rc=$? ${SECONDS}s" >> $S; grep -E "^decode" $W/bench-$x-$round.log | cut -c1-120 >> $S
  done
done
pack
( B=/tmp/main323/bin OUT=$W/quant timeout 200 bash lab/runs/quantizer-speed.sh > /dev/null 2>&1 ); echo "quantizer-speed rc=$? ${SECONDS}s" >> $S
grep -E "^bits|^time|^\||ncu|Duration|Throughput|stalls|Achieved Occupancy|Registers|Issue Slots|Eligible|L2 Hit|elapsed" $W/quant/quantizer-speed.log | head -80 >> $S
rm -f $W/quant/*.ncu-rep; pack
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
timeout 60 /tmp/main323/bin/sdpa bench --shapes 1,32:8,1:4096,128 --variants decode --modes graph > $W/decode-bench.log 2>&1
echo "small decode bench rc=$?" >> $S; grep -E "^decode" $W/decode-bench.log | cut -c1-120 >> $S
timeout 90 "$NCU" --clock-control none --metrics gpu__time_duration.sum,launch__grid_size,launch__block_size,launch__registers_per_thread -c 12 \
  /tmp/main323/bin/sdpa bench --shapes 1,32:8,1:4096,128 --variants decode --modes direct --samples 1 --launches 1 > $W/decode-ncu.log 2>&1
echo "decode ncu rc=$?" >> $S; grep -E "sdpa_|gpu__time_duration|grid_size|block_size|registers" $W/decode-ncu.log | head -48 >> $S
pack
echo "elapsed ${SECONDS}s" >> $S
cat $S
