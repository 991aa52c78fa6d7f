"""Time per call of ``sdpa_fp8.attention`` from Python, at the record shapes
(``kernels_gpu::record::SHAPES``, the shapes ``sdpa bench`` takes by
default), to compare with ``sdpa bench`` on the same machine.

Each shape runs the variant the library recommends (what ``attention``
runs; ``sdpa bench --variants NAME`` times the same kernel), timed as
``sdpa bench`` times: CUDA events around back-to-back calls, as many as
make about 2 ms of work (at most ``--launches``), ``--samples`` times after
a warm-up of at most five samples' calls, the median per call. (Long
samples would keep the GPU busy for seconds, long enough for its power cap
to lower the clock, which ``sdpa bench``'s samples never see.) Columns:

- ``eager_us``: ``sdpa_fp8.attention(...)`` called from Python: the
  argument checks, the custom op's dispatch, DLPack, the launch; compare
  with ``sdpa bench``'s ``direct`` mode.
- ``graph_us``: the same calls captured in one CUDA graph and replayed;
  compare with ``sdpa bench``'s ``graph`` mode.
- ``native_us``: the native call alone on prepared DLPack capsules (no
  Python checks, no custom op): what the Python layers add is
  ``eager_us - native_us`` where the GPU does not hide it.

Usage: python python/benches/bench.py [--shapes 2,8,256,64 ...] [--out-dtype f16|bf16]
       [--layout bhsd|bshd] [--samples 20] [--launches 100] [--json FILE]
"""

import argparse
import json
import statistics
import sys

import torch
from torch.utils.dlpack import to_dlpack

import sdpa_fp8
from sdpa_fp8 import _native

DTYPES = {"f16": torch.float16, "bf16": torch.bfloat16}


def parse_shape(text: str) -> tuple[int, int, int, int, bool]:
    """``B,H,S,D`` or ``B,H,S,D,causal`` (Sq = Skv = S, Hq = Hkv = H)."""
    parts = text.split(",")
    causal = len(parts) == 5 and parts[4] == "causal"
    if len(parts) not in (4, 5) or (len(parts) == 5 and not causal):
        raise SystemExit(f"bad shape {text!r}: B,H,S,D or B,H,S,D,causal")
    b, h, s, d = (int(p) for p in parts[:4])
    return b, h, s, d, causal


def median_per_call(run_sample, launches: int, samples: int) -> float:
    """Median over ``samples`` of (event time of one ``run_sample()``) /
    ``launches``, in microseconds."""
    times = []
    for _ in range(samples):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        run_sample()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) * 1e3 / launches)
    return statistics.median(times)


SAMPLE_TARGET_MS = 2.0


def launches_for(call, most: int) -> int:
    """Calls per sample as ``sdpa bench`` adapts them: about
    ``SAMPLE_TARGET_MS`` of work, at least 1, at most ``most``."""
    call()
    torch.cuda.synchronize()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    call()
    stop.record()
    stop.synchronize()
    return max(1, min(most, round(SAMPLE_TARGET_MS / max(start.elapsed_time(stop), 1e-6))))


def time_eager(call, launches: int, samples: int, warmup: int) -> float:
    for _ in range(warmup):
        call()
    torch.cuda.synchronize()

    def sample():
        for _ in range(launches):
            call()

    return median_per_call(sample, launches, samples)


def time_graph(call, launches: int, samples: int) -> float:
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        call()  # the run before capture: workspace and tensor maps (README)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=stream):
        for _ in range(launches):
            call()
    graph.replay()
    torch.cuda.synchronize()
    return median_per_call(graph.replay, launches, samples)


def bench_shape(shape, args) -> dict:
    b, h, s, d, causal = shape
    out_dtype = DTYPES[args.out_dtype]
    dims = (b, s, h, d) if args.layout == "bshd" else (b, h, s, d)
    gen = torch.Generator(device="cuda").manual_seed(0)
    q8, qd = sdpa_fp8.quantize(torch.randn(dims, device="cuda", generator=gen), layout=args.layout)
    k8, kd = sdpa_fp8.quantize(torch.randn(dims, device="cuda", generator=gen), layout=args.layout)
    v8, vd = sdpa_fp8.quantize(torch.randn(dims, device="cuda", generator=gen), layout=args.layout)

    def call():
        return sdpa_fp8.attention(
            q8, k8, v8, q_descale=qd, k_descale=kd, v_descale=vd,
            causal=causal, out_dtype=out_dtype, layout=args.layout,
        )  # fmt: skip

    # The native call on capsules made once (the native module only reads
    # them), into one output buffer, in the kernels' layout.
    bhsd = [t if args.layout == "bhsd" else t.transpose(1, 2).contiguous() for t in (q8, k8, v8)]
    out = torch.empty(bhsd[0].shape, dtype=out_dtype, device="cuda")
    capsules = [to_dlpack(t.view(torch.uint8)) for t in bhsd] + [to_dlpack(t) for t in (qd, kd, vd, out)]
    stream = torch.cuda.current_stream().cuda_stream

    def native():
        _native.attention(*capsules, None, d**-0.5, causal, stream)

    variant = sdpa_fp8.recommended_variant(dims, dims, causal=causal, out_dtype=out_dtype, layout=args.layout)
    launches = launches_for(call, args.launches)
    warmup = min(args.warmup, 5 * launches)
    return {
        "shape": f"{b},{h},{s},{d}" + (",causal" if causal else ""),
        "variant": variant,
        "launches": launches,
        "eager_us": time_eager(call, launches, args.samples, warmup),
        "graph_us": time_graph(call, launches, args.samples),
        "native_us": time_eager(native, launches, args.samples, warmup),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shapes", nargs="+", default=list(_native.RECORD_SHAPES))
    parser.add_argument("--out-dtype", choices=sorted(DTYPES), default="f16")
    parser.add_argument("--layout", choices=["bhsd", "bshd"], default="bhsd")
    parser.add_argument("--samples", type=int, default=20)
    parser.add_argument("--launches", type=int, default=100)
    parser.add_argument("--warmup", type=int, default=50)
    parser.add_argument("--json", help="also write the rows here")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("bench.py needs a CUDA GPU", file=sys.stderr)
        return 2
    shapes = [parse_shape(t) for t in args.shapes]
    device = torch.cuda.get_device_name()
    print(f"{device}, torch {torch.__version__}, sdpa_fp8 {sdpa_fp8.__version__}, "
          f"out {args.out_dtype}, layout {args.layout}", file=sys.stderr)  # fmt: skip
    rows = []
    for shape in shapes:
        rows.append(bench_shape(shape, args))
        print(f"  {rows[-1]['shape']} done", file=sys.stderr)
    print(f"{'shape':<22} {'variant':<12} {'eager_us':>10} {'graph_us':>10} {'native_us':>10}")
    for r in rows:
        print(
            f"{r['shape']:<22} {r['variant']:<12} {r['eager_us']:>10.2f} {r['graph_us']:>10.2f} {r['native_us']:>10.2f}"
        )
    variants = ",".join(sorted({r["variant"] for r in rows}))
    print(
        f"\ncompare: sdpa bench --shapes {' '.join(r['shape'] for r in rows)} "
        f"--variants {variants} --out-dtype {args.out_dtype} --modes graph,direct "
        f"(direct ~ eager_us, graph ~ graph_us; bench.py runs bhsd, the kernels' layout, unless --layout bshd)"
    )
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": device, "torch": torch.__version__, "args": vars(args), "rows": rows}, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
