#!/usr/bin/env bash
# Run 273 (session 31): stage 157's launch-floor question on whatever GPU
# comes (an H200 was wanted since run 261): the empty `split-n64` D = 64
# entry (run 261's empty.patch over e351aee's code) at 128 blocks and one,
# with its 118.5 KB and with no shared memory; main's `split-n64` at the
# mission shapes; torch's floor and the peers in the same call
# (predictions: results/2026-11-27-predictions-run273.md).
set -uo pipefail
mkdir -p gpu-bundle-diag/r273/bin; tar xJf gpu-bundle-diag/r273/r273.tar.xz -C gpu-bundle-diag/r273/bin
B=gpu-bundle-diag/r273/bin
nvidia-smi --query-gpu=name,serial,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
for r in 1 2 3; do
  timeout 60 $B/main/sdpa bench --variants split-n64 --shapes 2,8,256,64 1,8,512,64 --modes graph \
    --json "$OUT/main-$r.json" >/dev/null 2>&1 || echo "main round $r failed"
  for smem in 118512 0; do
    SDPA_EXP_SMEM=$smem timeout 60 $B/empty/sdpa bench --variants split-n64 --shapes 2,8,256,64 1,1,1,64 \
      --modes graph --json "$OUT/empty-$smem-$r.json" >/dev/null 2>&1
  done
done
timeout 240 python3 scripts/peers.py 2,8,256,64 1,8,512,64 > "$OUT/peers.jsonl" 2>/dev/null
python3 - "$OUT" <<'PY'
import glob, json, sys
d = sys.argv[1]
best = {}
for f in glob.glob(f"{d}/main-*.json") + glob.glob(f"{d}/empty-*.json"):
    name = f.rsplit("/", 1)[1].rsplit("-", 1)[0]
    for row in json.load(open(f))["rows"]:
        s = row["shape"]
        key = (name, f"{s['batch']},{s['heads']},{s['seq']},{s['head_dim']}")
        best[key] = min(best.get(key, 1e9), row["median_us"])
for (name, shape), t in sorted(best.items()):
    print(f"  {name:<14} {shape:<12} {t:6.3f} us (best median of 3)")
peers = {}
for line in open(f"{d}/peers.jsonl"):
    r = json.loads(line)
    if "floor" in r:
        print(f"  torch floor                 {r['median_us']:6.3f} us")
    elif "median_us" in r:
        key = ",".join(str(x) for x in r["shape"][:4]) if isinstance(r.get("shape"), list) else str(r.get("shape"))
        print(f"  {r.get('peer', '?'):<20} {key:<14} {r['median_us']:6.3f} us")
PY
tar czf "$OUT/data.tgz" -C "$OUT" $(cd "$OUT" && ls main-*.json empty-*.json peers.jsonl) && (cd "$OUT" && rm -f main-*.json empty-*.json)
echo "elapsed ${SECONDS}s"
