#!/usr/bin/env bash
# Run 264 (session 30): do the 16 query blocks of a head that read the
# same K/V lines through L2 cost `split-n64` at the mission shapes
# (predictions: results/2026-11-27-predictions-run264.md)? One experiment
# build (replicas.patch over a425806's code, cubins): the host copies K
# and V R times (SDPA_EXP_KV_REPLICAS) and query block b of a head reads
# copy b mod R; R = 1 is the baseline in the same binary.
set -uo pipefail
mkdir -p gpu-bundle-diag/r264/bin; tar xJf gpu-bundle-diag/r264/r264.tar.xz -C gpu-bundle-diag/r264/bin
B=gpu-bundle-diag/r264/bin/sdpa-rep
nvidia-smi --query-gpu=name,serial,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
S="2,8,256,64 1,8,512,64 1,8,1024,64 4,8,512,64"
for r in 1 2 3; do
  for R in 1 2 4 8; do
    # shellcheck disable=SC2086
    SDPA_EXP_KV_REPLICAS=$R timeout 60 $B bench --variants split-n64 --shapes $S --modes graph \
      --json "$OUT/rep-$R-$r.json" >/dev/null 2>>"$OUT/err.txt" || echo "R=$R round $r failed"
  done
done
python3 - "$OUT" <<'PY'
import glob, json, sys
d = sys.argv[1]
best, ok = {}, True
for f in glob.glob(f"{d}/rep-*.json"):
    R = int(f.rsplit("/", 1)[1].split("-")[1])
    for row in json.load(open(f))["rows"]:
        s = row["shape"]
        key = (f"{s['batch']},{s['heads']},{s['seq']},{s['head_dim']}", R)
        best[key] = min(best.get(key, 1e9), row["median_us"])
        ok = ok and row["correct"]
shapes = sorted({k[0] for k in best}, key=lambda x: [int(v) for v in x.split(",")])
print(f"{'shape':<14}" + "".join(f"{'R=' + str(R):>9}" for R in (1, 2, 4, 8)) + "   R/1 for 2, 4, 8")
for s in shapes:
    t = [best[(s, R)] for R in (1, 2, 4, 8)]
    print(f"{s:<14}" + "".join(f"{x:>9.3f}" for x in t) + "   " + " ".join(f"{x / t[0]:.3f}" for x in t[1:]))
print("all rows correct:", ok)
PY
tar czf "$OUT/rep.tgz" -C "$OUT" $(cd "$OUT" && ls rep-*.json) && rm -f "$OUT"/rep-*.json
echo "elapsed ${SECONDS}s"
