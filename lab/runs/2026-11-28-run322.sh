#!/usr/bin/env bash
# Run 322 (issue 42): the candle op after its plan-cache fix and with
# [B, S, H, D] tensors (host/tests/candle_op.rs: the five tests).
# Predictions: every test passes; bshd bits equal to bhsd's; the softcap
# and window calls after a plain call on the same shapes within the gate
# of candle's own capped and windowed attention.
#   carry: gpu-bundle-diag/r322 (candle_op.gz)
set -uo pipefail
S=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,serial --format=csv,noheader > $S
gunzip -c gpu-bundle-diag/r322/candle_op.gz > /tmp/candle_op && chmod +x /tmp/candle_op
export LD_LIBRARY_PATH=$(python3 -c 'import nvidia, os; print(os.path.join(list(nvidia.__path__)[0], "cu13", "lib"))'):${LD_LIBRARY_PATH:-}
timeout 200 /tmp/candle_op --ignored --nocapture --test-threads=1 > $OUT/candle_op.log 2>&1; echo "candle_op rc=$?" >> $S
grep -E "test result|bits|panicked|: max_err" -A1 $OUT/candle_op.log | head -40 >> $S
echo "elapsed ${SECONDS}s" >> $S
cat $S
