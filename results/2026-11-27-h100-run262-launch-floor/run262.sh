#!/usr/bin/env bash
# Run 262 (session 30): run 261 again with cubin builds: is `split-n64`'s launch dearer than torch's on
# this GPU, and does its 118.5 KB of dynamic shared memory pay a part of it
# (predictions: results/2026-11-27-predictions-run262.md)? Three builds of
# c4994c8's code (gpu-bundle-diag/r262/r262.tar.xz, built with ptxas: cubins): base; noapart
# (noapart.patch: the merge's exchange inside the K/V tiles, 85.7 KB,
# stage 95's other side); empty (empty.patch: split-n64 D = 64 returns at
# once, and SDPA_EXP_SMEM / SDPA_EXP_THREADS override its launch).
set -uo pipefail
mkdir -p gpu-bundle-diag/r262/bin; tar xJf gpu-bundle-diag/r262/r262.tar.xz -C gpu-bundle-diag/r262/bin
B=gpu-bundle-diag/r262/bin
nvidia-smi --query-gpu=name,serial,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
ROUNDS=3 bash scripts/ab-chain.sh split-n64 "2,8,256,64 1,8,512,64 1,8,384,64 1,1,1,64" graph \
  base=$B/sdpa-base noapart=$B/sdpa-noapart > "$OUT/ab.log" 2>&1
tail -8 "$OUT/ab.log"
for r in 1 2; do
  for cfg in "118512 256" "85744 256" "44784 256" "0 256" "0 32"; do
    set -- $cfg
    SDPA_EXP_SMEM=$1 SDPA_EXP_THREADS=$2 timeout 60 $B/sdpa-empty bench --variants split-n64 \
      --shapes 2,8,256,64 1,1,1,64 --modes graph --json "$OUT/empty-$1-$2-$r.json" >/dev/null 2>&1
  done
done
timeout 200 python3 scripts/peers.py 2,8,256,64 1,8,512,64 > "$OUT/peers.jsonl" 2>/dev/null
python3 - "$OUT" <<'PY'
import glob, json, sys
d = sys.argv[1]
best = {}
for f in sorted(glob.glob(f"{d}/empty-*.json")):
    _, smem, threads, _ = f.rsplit("/", 1)[1][:-5].split("-")
    for row in json.load(open(f))["rows"]:
        s = row["shape"]
        key = (int(smem), int(threads), f"{s['batch']},{s['heads']},{s['seq']},{s['head_dim']}")
        best[key] = min(best.get(key, 1e9), row["median_us"])
print("empty split-n64 D = 64 (best median of 2 rounds, us):")
for (smem, threads, shape), t in sorted(best.items(), key=lambda kv: (kv[0][2], -kv[0][0], -kv[0][1])):
    print(f"  smem {smem:>6} threads {threads:>3} {shape:<12} {t:6.3f}")
for line in open(f"{d}/peers.jsonl"):
    r = json.loads(line)
    if "floor" in r or r.get("peer", "").startswith("torch-cudnn"):
        print(f"  {r.get('floor') or r['peer']:<20} {str(r.get('shape', '')):<18} {r['median_us']:6.3f}")
PY
tar czf "$OUT/empty-peers.tgz" -C "$OUT" $(cd "$OUT" && ls empty-*.json peers.jsonl gpu.txt) && (cd "$OUT" && rm -f empty-*.json)
echo "elapsed ${SECONDS}s"
