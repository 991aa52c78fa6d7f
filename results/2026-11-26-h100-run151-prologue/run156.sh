#!/usr/bin/env bash
# Run 156 (session 17): stage 106, split-n64 D = 64 with 128-key blocks
# (n128.patch; wrong at one key and causal, timed only), chained with the
# base timed again last.
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $OUT/gpu.txt
B=gpu-bundle-diag/r152
mkdir -p $OUT/ab
SHAPES="2,8,256,64 1,8,512,64 1,8,512,64,causal 1,1,1,64 4,8,512,64 1,8,1024,64 1,8,384,64 2,8,640,64"
OUT=$OUT/ab ROUNDS=5 STEP_TIMEOUT=100 bash scripts/ab-chain.sh split-n64 "$SHAPES" graph \
  base=$B/sdpa-base n128=$B/sdpa-n128 base2=$B/sdpa-base > $OUT/ab.log 2>&1
tar czf $OUT/ab-json.tgz -C $OUT ab
echo "A/B: ok $(grep -c ' ok$' $OUT/ab.log), FAIL $(grep -c FAIL $OUT/ab.log)"
python3 - "$OUT/ab" <<'PY'
import json, sys, glob, collections
best = collections.defaultdict(dict)
for f in glob.glob(sys.argv[1] + "/ab-*.json"):
    tag = f.split("/ab-")[-1].rsplit("-", 1)[0]
    for r in json.load(open(f))["rows"]:
        s = r["shape"]; k = f'{s["batch"]},{s["heads"]},{s["seq"]},{s["head_dim"]}' + (",causal" if s.get("causal") else "")
        best[k][tag] = (min(r["median_us"], best[k].get(tag, (1e9, ""))[0]), r.get("check", ""))
tags = ["base", "n128", "base2"]
print("best medians (failed checks included):  n128/base  base2/base")
for k, d in best.items():
    print(k.ljust(20) + "".join(f"{d[t][0]:8.2f}" for t in tags) + f"   {d['n128'][0]/d['base'][0]:.3f}   {d['base2'][0]/d['base'][0]:.3f}")
PY
rm -rf $OUT/ab
