#!/usr/bin/env bash
# Run 258 (session 30): bf16 output (predictions:
# results/2026-11-27-predictions-run258.md). The gate with its bf16 cases,
# overlap, GPU fuzz and determinism over all 30 kernels; `sdpa run` end to
# end in both output types (inputs made by e2e.py, carried in gpu-bundle/);
# f16 against bf16 timing, interleaved, in this one run.
set -uo pipefail
# The bundle travels as one xz archive (its five binaries share the embedded
# kernels, 36 MB -> 4.2 MB; the device tool carries 64 MB with the tree).
tar xJf gpu-bundle-diag/r258/gb.tar.xz
B=gpu-bundle/bin
nvidia-smi --query-gpu=name,serial,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
OUT=$OUT/rec STEP_TIMEOUT=450 bash scripts/gpu-run.sh gate fuzz | tail -14
timeout 240 "$B/determinism" --ignored --nocapture --test-threads=1 >"$OUT/determinism.log" 2>&1
echo "determinism exit $?"; tail -3 "$OUT/determinism.log"
for t in f16 bf16; do
  "$B/sdpa" run --input gpu-bundle/e2e-in.safetensors --output "$OUT/e2e-$t.safetensors" --out-dtype "$t"
done
"$B/sdpa" run --input gpu-bundle/e2e-wide.safetensors --output "$OUT/e2e-wide-f16.safetensors"
echo "wide input with f16 output: exit $? (2 expected)"
"$B/sdpa" run --input gpu-bundle/e2e-wide.safetensors --output "$OUT/e2e-wide-bf16.safetensors" --out-dtype bf16
S="2,8,256,64 1,8,512,64 2,16,8192,64 4,16,4096,128"
for r in 1 2; do
  for t in f16 bf16; do
    # shellcheck disable=SC2086
    timeout 150 "$B/sdpa" bench --variants split-n64,wgmma,wgmma-fp8pv --shapes $S --modes graph \
      --out-dtype "$t" --json "$OUT/ab-$t-$r.json" >"$OUT/ab-$t-$r.txt" 2>&1 || echo "bench $t $r failed"
  done
done
tar czf "$OUT/rec.tgz" -C "$OUT" rec && rm -r "$OUT/rec"
python3 - "$OUT" <<'PY'
import json, sys
d = sys.argv[1]
rows = {}
for t in ("f16", "bf16"):
    for r in (1, 2):
        for row in json.load(open(f"{d}/ab-{t}-{r}.json"))["rows"]:
            key = (row["variant"], row["shape"]["batch"], row["shape"]["heads"], row["shape"]["seq"], row["shape"]["head_dim"])
            rows.setdefault(key, {}).setdefault(t, []).append((row["median_us"], row["p10_us"], row["correct"]))
print(f"{'variant':<12} {'shape':<16} {'f16 med':>9} {'bf16 med':>9} {'ratio':>6} {'p10 ratio':>9} ok")
for key, v in rows.items():
    f, b = v["f16"], v["bf16"]
    med = lambda xs: sorted(x[0] for x in xs)[0]
    p10 = lambda xs: sorted(x[1] for x in xs)[0]
    ok = all(x[2] for x in f + b)
    print(f"{key[0]:<12} {','.join(map(str, key[1:])):<16} {med(f):>9.2f} {med(b):>9.2f} {med(b)/med(f):>6.3f} {p10(b)/p10(f):>9.3f} {ok}")
PY
echo "elapsed ${SECONDS}s"
