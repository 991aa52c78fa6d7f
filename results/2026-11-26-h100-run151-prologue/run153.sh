#!/usr/bin/env bash
# Run 153 (session 17): stage 103, split-n64 D = 64 without the loop's mask
# and/or refill code (patches next to this script), chained with the base
# timed again last. nomask / nmnr are wrong for causal shapes by design.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $OUT/gpu.txt
B=gpu-bundle-diag/r152
mkdir -p $OUT/ab
SHAPES="2,8,256,64 1,8,512,64 1,8,512,64,causal 1,1,1,64 4,8,512,64 1,8,1024,64 1,8,384,64 2,8,640,64"
OUT=$OUT/ab ROUNDS=5 STEP_TIMEOUT=200 bash scripts/ab-chain.sh split-n64 "$SHAPES" graph \
  base=$B/sdpa-base nomask=$B/sdpa-nomask norefill=$B/sdpa-norefill nmnr=$B/sdpa-nmnr base2=$B/sdpa-base > $OUT/ab.log 2>&1
tar czf $OUT/ab-json.tgz -C $OUT ab
echo "A/B: ok $(grep -c ' ok$' $OUT/ab.log), FAIL $(grep -c FAIL $OUT/ab.log)"
grep -A60 "^variant  shape" $OUT/ab.log
python3 - "$OUT/ab" <<'PY'
import json, sys, glob, collections
best = collections.defaultdict(dict)
for f in glob.glob(sys.argv[1] + "/ab-*.json"):
    tag = f.split("/ab-")[-1].rsplit("-", 1)[0]
    for r in json.load(open(f))["rows"]:
        s = r["shape"]; k = f'{s["batch"]},{s["heads"]},{s["seq"]},{s["head_dim"]}' + (",causal" if s.get("causal") else "")
        best[k][tag] = min(r["median_us"], best[k].get(tag, 1e9))
tags = ["base", "nomask", "norefill", "nmnr", "base2"]
print("best medians incl. failed checks:")
for k, d in best.items():
    print(k.ljust(20) + "".join(f"{d.get(t, float('nan')):8.2f}" for t in tags) + "  " + " ".join(f"{d.get(t, float('nan'))/d['base']:.3f}" for t in tags[1:]))
PY
rm -rf $OUT/ab
