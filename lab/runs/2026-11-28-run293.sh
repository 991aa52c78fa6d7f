#!/usr/bin/env bash
# Run 293 (issue 38): the peers again on run 290-292's warm H200, after
# the fix of peers.py's cuDNN step helper (its `name` argument clashed with
# cuDNN's `name=`; every cudnn-fp8 row of run 292 was an error row).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl 2>/dev/null
export PYTHONPATH=/tmp/site
S="2,8,256,64 1,8,512,64 4,16,2048,64 2,16,8192,64 2,16,8192,64,causal 4,16,4096,128 1,16,16384,128 1,16,16384,128,causal"
# shellcheck disable=SC2086
timeout 300 python3 scripts/peers.py $S > "$OUT/peers.jsonl" 2> "$OUT/peers.err"
echo "rc=$?"
grep -h cudnn-fp8 "$OUT/peers.jsonl" | cut -c1-400
