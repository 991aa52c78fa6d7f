#!/usr/bin/env python3
"""Times the CUDA C++ peers of the `sdpa` kernels: torch SDPA with the cuDNN
and flash backends, fp16 and bf16, on the same shapes and the same way as
`sdpa bench` times its own kernels (warm-up, then samples of 100 calls
captured in one CUDA graph, timed with CUDA events; time per call).

Usage: peers.py SHAPE [SHAPE ...]   where SHAPE is B,H,S,D or B,H,S,D,causal
       peers.py --summarize FILE     prints a table of a JSON-lines file
Prints one JSON object per (shape, backend, dtype) on stdout, after one
{"floor": ...} object: a one-element torch kernel timed the same way (the
launch floor of the harness). Without torch
or without a GPU it prints one JSON object {"skipped": reason} and exits 0.
"""
import json
import statistics
import sys


def parse_shape(text):
    parts = text.split(",")
    b, h, s, d = (int(x) for x in parts[:4])
    causal = len(parts) > 4 and parts[4] in ("causal", "c", "1")
    return b, h, s, d, causal


def time_graph(fn, launches=100, samples=20, warmup=20):
    import torch

    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(launches):
            fn()
    graph.replay()
    torch.cuda.synchronize()
    per_call = []
    for _ in range(samples):
        start = torch.cuda.Event(enable_timing=True)
        stop = torch.cuda.Event(enable_timing=True)
        start.record()
        graph.replay()
        stop.record()
        stop.synchronize()
        per_call.append(start.elapsed_time(stop) * 1e3 / launches)
    per_call.sort()
    n = len(per_call)
    return {
        "median_us": statistics.median(per_call),
        "p10_us": per_call[round((n - 1) * 0.1)],
        "p90_us": per_call[round((n - 1) * 0.9)],
        "std_us": statistics.pstdev(per_call),
    }


def summarize(path):
    for line in open(path):
        r = json.loads(line)
        if "floor" in r:
            print(f"{'launch floor':<20} {r['floor']:<22} {r['median_us']:>10.2f} us")
        elif "median_us" in r:
            shape = ",".join(map(str, r["shape"])) + (",causal" if r["causal"] else "")
            print(f"{r['peer']:<20} {shape:<22} {r['median_us']:>10.2f} us")
        else:
            print(r)
    return 0


def main(argv):
    if argv[:1] == ["--summarize"]:
        return summarize(argv[1])
    try:
        import torch
        import torch.nn.functional as F
        from torch.nn.attention import SDPBackend, sdpa_kernel
    except ImportError as e:
        print(json.dumps({"skipped": f"torch is not importable: {e}"}))
        return 0
    if not torch.cuda.is_available():
        print(json.dumps({"skipped": "torch sees no CUDA device"}))
        return 0
    # The launch floor of this harness: a one-element torch kernel, timed the
    # same way (graph replay). No "peer" key: the records skip the row.
    x = torch.zeros(1, device="cuda")
    y = torch.empty_like(x)
    floor = {"floor": "1-element torch add", "torch": torch.__version__}
    floor.update(time_graph(lambda: torch.add(x, 1, out=y)))
    print(json.dumps(floor), flush=True)
    backends = {"cudnn": SDPBackend.CUDNN_ATTENTION, "flash": SDPBackend.FLASH_ATTENTION}
    dtypes = {"fp16": torch.float16, "bf16": torch.bfloat16}
    for text in argv:
        b, h, s, d, causal = parse_shape(text)
        for dname, dtype in dtypes.items():
            gen = torch.Generator(device="cuda").manual_seed(0)
            q, k, v = (torch.randn(b, h, s, d, device="cuda", dtype=dtype, generator=gen) for _ in range(3))
            for bname, backend in backends.items():
                row = {"peer": f"torch-{bname}-{dname}", "shape": [b, h, s, d], "causal": causal,
                       "torch": torch.__version__}
                try:
                    with sdpa_kernel([backend]):
                        fn = lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal)
                        fn()
                        row.update(time_graph(fn))
                except Exception as e:  # a backend that refuses the shape is reported, not fatal
                    row["error"] = str(e).splitlines()[0][:200]
                print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
