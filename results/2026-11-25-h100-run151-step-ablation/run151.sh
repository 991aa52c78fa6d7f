#!/usr/bin/env bash
# Run 151: stage 88's ablation of split-n64's step repeated on HEAD
# (17ec350; builds made with run 136's ablate.py, results/2026-11-25-h100-run136-step-ablation/): base, and builds that each leave one
# part of the step out (wrong outputs by design; only the times count).
set -uo pipefail
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $OUT/gpu.txt
SHAPES="2,8,256,64 1,8,512,64 1,1,512,64 1,1,1,64 1,8,1024,64"
mkdir -p $OUT/ab
B=gpu-bundle-diag/r151
OUT=$OUT/ab ROUNDS=2 STEP_TIMEOUT=100 bash scripts/ab-chain.sh split-n64 "$SHAPES" graph \
  base=$B/sdpa-base nok=$B/sdpa-nok nov=$B/sdpa-nov noexp=$B/sdpa-noexp nopv=$B/sdpa-nopv noqk=$B/sdpa-noqk > $OUT/ab.log 2>&1
tar czf $OUT/ab-json.tgz -C $OUT ab
python3 - "$OUT/ab" <<'PY'
import json, sys, glob, collections
best = collections.defaultdict(dict)
for f in glob.glob(sys.argv[1] + "/ab-*.json"):
    tag = f.split("/ab-")[-1].rsplit("-", 1)[0]
    for r in json.load(open(f))["rows"]:
        s = r["shape"]; k = f'{s["batch"]},{s["heads"]},{s["seq"]},{s["head_dim"]}'
        best[k][tag] = min(r["median_us"], best[k].get(tag, 1e9))
tags = ["base", "nok", "nov", "noexp", "nopv", "noqk"]
print("shape".ljust(14) + "".join(t.rjust(8) for t in tags) + "   minus base: " + " ".join(t for t in tags[1:]))
for k, d in best.items():
    print(k.ljust(14) + "".join(f"{d[t]:8.2f}" for t in tags) + "   " + " ".join(f"{d[t] - d['base']:+.2f}" for t in tags[1:]))
PY
rm -rf $OUT/ab
