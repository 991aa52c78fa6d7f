#!/usr/bin/env python3
"""Times the peers of the `sdpa` kernels on the same shapes and the same way
as `sdpa bench` times its own kernels:

- 16-bit: torch SDPA with the cuDNN and flash backends, fp16 and bf16;
- FP8: cuDNN's FP8 SDPA through the `nvidia-cudnn-frontend` package (the
  `cudnn` module) over the cuDNN that torch loads: E4M3 Q in [B, Hq, Sq, D],
  K, V in [B, Hkv, Skv, D], per-tensor scales, E4M3 output, scale 1/sqrt(D);
- the device-to-device copy: one `copy` row per run, a torch copy of 1 GiB
  (bytes read + written per second), the rate decode rows are held against.

Shapes are `sdpa bench`'s: B,Hq[:Hkv],Sq[:Skv],D[,causal] (a field without
`:` gives both sides). Where Hq != Hkv torch runs with `enable_gqa=True`
(each K/V head serves Hq/Hkv query heads). Causal is aligned bottom-right,
as the library masks (query i sees key j iff j <= i + Skv - Sq): with Sq =
Skv torch's `is_causal=True`, otherwise torch's own bottom-right causal
bias (`torch.nn.attention.bias.causal_lower_right`), and cuDNN FP8's
`use_causal_mask_bottom_right`. A backend that refuses a shape gives a row
with `error` (the first line of its refusal) instead of a time.

The method, shared with `sdpa bench` (host/src/bench.rs): one call timed
alone picks the launches per sample (about 2 ms of work, at most 100); a
warm-up of min(50, 5 x launches) calls; the launches captured in one CUDA
graph; 20 samples, each one replay between two CUDA events; time per call =
elapsed / launches. The samples are sorted and the median is the sample at
index round((n - 1) / 2), rounding half away from zero (for 20 samples the
11th smallest), p10 and p90 the same way: the definition `sdpa bench` uses.

Usage: peers.py SHAPE [SHAPE ...]   where SHAPE is B,Hq[:Hkv],Sq[:Skv],D[,causal]
       peers.py --summarize FILE     prints a table of a JSON-lines file
Prints one JSON object per (shape, peer) on stdout, after one {"floor": ...}
object: a one-element torch kernel timed the same way (the launch floor of
the harness), with the library versions and the SM clock (nvidia-smi, read
right after the floor's replays), and one {"copy": ...} object: the copy's
`bytes` (each way), its timing and `tb_s` (bytes read + written over the
median, TB/s). A peer row holds `peer` (its name), `backend`, `dtype` (fp16,
bf16 or fp8), `shape` ([B, Hq, Sq, D]), `heads_kv`, `seq_kv`, `label` (the
shape as given), `causal`, and either the timing (with `sm_clock_mhz` read
right after its samples and `kv_tb_s`: K and V bytes in the row's own type
over the median, TB/s) or `error`; the 16-bit causal rows name the `mask`
they ran with; the FP8 rows add `rel_l2` against a float64 reference on the
dequantized inputs and the scales and amaxes they ran with. A malformed
shape is an error (exit 2) before anything runs. Without torch or without a
GPU it prints one JSON object {"skipped": reason} and exits 0.
"""
import json
import math
import subprocess
import sys

# Launches per sample, most (`sdpa bench --launches`'s default).
MOST_LAUNCHES = 100
# Samples per row (`sdpa bench --samples`'s default).
SAMPLES = 20
# Target device time of one sample when choosing launches per sample.
SAMPLE_TARGET_US = 2000.0
# Largest finite E4M3 value.
E4M3_MAX = 448.0
# Bytes the device-to-device copy reads (and writes): `sdpa bench`'s COPY_BYTES.
COPY_BYTES = 1 << 30
# Most query tokens of a decode shape: `--summarize` shows their K+V rate.
DECODE_MAX_QUERIES = 16


class Shape:
    """A shape as `sdpa bench --shapes` takes it: B,Hq[:Hkv],Sq[:Skv],D[,causal]."""

    def __init__(self, text):
        def bad(why):
            return ValueError(f"shape {text!r} is not B,Hq[:Hkv],Sq[:Skv],D[,causal]: {why}")

        parts = [p.strip() for p in text.split(",")]
        if len(parts) not in (4, 5) or (len(parts) == 5 and parts[4] != "causal"):
            raise bad("it needs 4 fields, or 5 with `causal` last")

        def size(p):
            p = p.strip()
            if not (p.isascii() and p.isdigit()):
                raise bad(f"{p!r} is not a size")
            if int(p) == 0:
                raise bad("every size must be above zero")
            return int(p)

        def pair(p):
            a, sep, b = p.partition(":")
            return (size(a), size(b)) if sep else (size(p), size(p))

        self.batch, self.head_dim = size(parts[0]), size(parts[3])
        self.heads_q, self.heads_kv = pair(parts[1])
        self.seq_q, self.seq_kv = pair(parts[2])
        self.causal = len(parts) == 5
        if self.heads_q % self.heads_kv:
            raise bad(f"{self.heads_q} query heads are not a multiple of {self.heads_kv} key/value heads")

    def label(self):
        """The shape as `sdpa bench` labels it (each pair short where its sides are equal)."""
        pair = lambda a, b: str(a) if a == b else f"{a}:{b}"
        base = f"{self.batch},{pair(self.heads_q, self.heads_kv)},{pair(self.seq_q, self.seq_kv)},{self.head_dim}"
        return base + (",causal" if self.causal else "")

    def q_dims(self):
        return (self.batch, self.heads_q, self.seq_q, self.head_dim)

    def kv_dims(self):
        return (self.batch, self.heads_kv, self.seq_kv, self.head_dim)

    def kv_elements(self):
        """Elements of K and V together."""
        return 2 * self.batch * self.heads_kv * self.seq_kv * self.head_dim

    def row_fields(self):
        """The shape's fields of a row (`shape` is [B, Hq, Sq, D], as rows have always had it)."""
        return {"shape": list(self.q_dims()), "heads_kv": self.heads_kv, "seq_kv": self.seq_kv,
                "label": self.label(), "causal": self.causal}


def tb_per_s(num_bytes, median_us):
    """Bytes over a median time per call, in TB/s."""
    return num_bytes / (median_us * 1e-6) / 1e12


def round_half_away(x):
    """Rounds as Rust's `f64::round` does (half away from zero), for x >= 0."""
    return int(math.floor(x + 0.5))


def summarize_samples(per_call):
    """Median, p10, p90 and standard deviation of per-call times, picked as
    `sdpa bench`'s `Timing::from_samples` picks them."""
    s = sorted(per_call)
    n = len(s)
    at = lambda q: s[round_half_away((n - 1) * q)]
    mean = sum(s) / n
    return {
        "median_us": at(0.5),
        "p10_us": at(0.1),
        "p90_us": at(0.9),
        "std_us": math.sqrt(sum((x - mean) ** 2 for x in s) / n),
    }


def launches_for(one_call_us):
    """Launches per sample: about SAMPLE_TARGET_US of work, 1 to MOST_LAUNCHES."""
    return min(max(round_half_away(SAMPLE_TARGET_US / max(one_call_us, 1e-3)), 1), MOST_LAUNCHES)


def time_graph(fn, replay_check=None):
    """Times `fn` by CUDA-graph replay (see the module doc). `replay_check`,
    if given, is (poison, verify): the output is poisoned, the graph replayed
    once, and `verify` raises if the replay did not write it."""
    import torch

    fn()
    start = torch.cuda.Event(enable_timing=True)
    stop = torch.cuda.Event(enable_timing=True)
    start.record()
    fn()
    stop.record()
    stop.synchronize()
    launches = launches_for(start.elapsed_time(stop) * 1e3)
    for _ in range(min(50, 5 * launches)):
        fn()
    torch.cuda.synchronize()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(launches):
            fn()
    if replay_check is not None:
        poison, verify = replay_check
        torch.cuda.synchronize()
        poison()
        torch.cuda.synchronize()
    graph.replay()
    torch.cuda.synchronize()
    if replay_check is not None:
        verify()
    per_call = []
    for _ in range(SAMPLES):
        start = torch.cuda.Event(enable_timing=True)
        stop = torch.cuda.Event(enable_timing=True)
        start.record()
        graph.replay()
        stop.record()
        stop.synchronize()
        per_call.append(start.elapsed_time(stop) * 1e3 / launches)
    timing = summarize_samples(per_call)
    timing["launches_per_sample"] = launches
    timing["samples"] = SAMPLES
    return timing


def sm_clocks():
    """The first GPU's current and maximum SM clock (MHz) from nvidia-smi,
    or the reason there are none."""
    try:
        out = subprocess.run(
            ["nvidia-smi", "--query-gpu=clocks.sm,clocks.max.sm", "--format=csv,noheader,nounits"],
            capture_output=True, text=True, timeout=30, check=True,
        ).stdout
        now, most = (int(x) for x in out.splitlines()[0].split(","))
        return {"sm_clock_mhz": now, "sm_clock_max_mhz": most}
    except Exception as e:  # no nvidia-smi: the record says so
        return {"sm_clock_error": str(e).splitlines()[0][:200] if str(e) else type(e).__name__}


def first_line(e):
    text = str(e).strip()
    return (text.splitlines()[0] if text else type(e).__name__)[:300]


class StepError(Exception):
    """A cuDNN step that failed, named."""


def step(what, fn, /, *args, **kwargs):
    """Runs one cuDNN frontend step; a failure names the step. (`what` and
    `fn` are positional-only: the steps pass `name=` to cuDNN.)"""
    try:
        return fn(*args, **kwargs)
    except Exception as e:
        raise StepError(f"{what}: {first_line(e)}") from e


class CudnnFp8:
    """cuDNN's FP8 SDPA (forward, inference): one built graph per shape."""

    # The per-tensor scale inputs of `sdpa_fp8`, in its argument order.
    SCALES = ("descale_q", "descale_k", "descale_v", "descale_s", "scale_s", "scale_o")

    def __init__(self, cudnn, torch):
        self.cudnn = cudnn
        self.torch = torch
        self.handle = step("create_handle", cudnn.create_handle)
        self.graphs = {}

    def graph(self, shape):
        """The built graph of a shape and its tensors by name (cached)."""
        key = shape.label()
        if key not in self.graphs:
            self.graphs[key] = self.build(shape)
        return self.graphs[key]

    def build(self, shape):
        cudnn = self.cudnn
        fp8, f32 = cudnn.data_type.FP8_E4M3, cudnn.data_type.FLOAT
        graph = step(
            "pygraph", cudnn.pygraph,
            io_data_type=fp8, intermediate_data_type=f32, compute_data_type=f32, handle=self.handle,
        )
        contiguous = lambda dims: [dims[1] * dims[2] * dims[3], dims[2] * dims[3], dims[3], 1]
        q_dims, kv_dims = list(shape.q_dims()), list(shape.kv_dims())
        t = {}
        for n, dims in (("q", q_dims), ("k", kv_dims), ("v", kv_dims)):
            t[n] = step("tensor " + n, graph.tensor, name=n, dim=dims, stride=contiguous(dims), data_type=fp8)
        for n in self.SCALES:
            t[n] = step("tensor " + n, graph.tensor, name=n, dim=[1, 1, 1, 1], stride=[1, 1, 1, 1], data_type=f32)
        # Causal, bottom-right as the library masks it: with Sq = Skv the
        # plain causal mask is the same one.
        if not shape.causal:
            mask = {}
        elif shape.seq_q == shape.seq_kv:
            mask = {"use_causal_mask": True}
        else:
            mask = {"use_causal_mask_bottom_right": True}
        o, _stats, amax_s, amax_o = step(
            "sdpa_fp8", graph.sdpa_fp8,
            q=t["q"], k=t["k"], v=t["v"],
            **{n: t[n] for n in self.SCALES},
            generate_stats=False, attn_scale=1.0 / math.sqrt(shape.head_dim), name="sdpa_fp8", **mask,
        )
        step("output o", lambda: o.set_output(True).set_dim(q_dims).set_stride(contiguous(q_dims))
             .set_data_type(fp8))
        for n, amax in (("amax_s", amax_s), ("amax_o", amax_o)):
            step("output " + n, lambda a=amax: a.set_output(True).set_dim([1, 1, 1, 1]).set_stride([1, 1, 1, 1])
                 .set_data_type(f32))
        t.update(o=o, amax_s=amax_s, amax_o=amax_o)
        step("validate", graph.validate)
        step("build_operation_graph", graph.build_operation_graph)
        step("create_execution_plans", graph.create_execution_plans, [cudnn.heur_mode.A, cudnn.heur_mode.FALLBACK])
        step("check_support", graph.check_support)
        step("build_plans", graph.build_plans)
        workspace = step("get_workspace_size", graph.get_workspace_size)
        return graph, t, workspace

    def row(self, shape):
        """Times one shape; returns the row's timing and accuracy fields."""
        torch = self.torch
        graph, t, workspace_bytes = self.graph(shape)
        gen = torch.Generator(device="cuda").manual_seed(0)
        data, deq = {}, {}
        scalar = lambda x: torch.full((1, 1, 1, 1), x, dtype=torch.float32, device="cuda")
        for n, dims in (("q", shape.q_dims()), ("k", shape.kv_dims()), ("v", shape.kv_dims())):
            x = torch.randn(*dims, device="cuda", dtype=torch.float32, generator=gen)
            scale = E4M3_MAX / x.abs().max().item()
            data[n] = (x * scale).clamp(-E4M3_MAX, E4M3_MAX).to(torch.float8_e4m3fn)
            data["descale_" + n] = scalar(1.0 / scale)
            deq[n] = to_f64(data[n]) * data["descale_" + n].to(torch.float64)
            del x
        # Softmax probabilities lie in [0, 1]: the largest E4M3 value covers them.
        data["scale_s"] = scalar(E4M3_MAX)
        data["descale_s"] = scalar(1.0 / E4M3_MAX)
        # The output scale is calibrated from one run's amax_o (delayed
        # scaling with a perfect history); the first run uses 1.
        data["scale_o"] = scalar(1.0)
        data["o"] = torch.empty(*shape.q_dims(), device="cuda", dtype=torch.float8_e4m3fn)
        data["amax_s"] = scalar(0.0)
        data["amax_o"] = scalar(0.0)
        workspace = torch.empty(max(workspace_bytes, 1), device="cuda", dtype=torch.uint8)
        pack = {t[n]: data[n] for n in data}
        cudnn, handle = self.cudnn, self.handle

        def run():
            # The handle must run on torch's current stream, or a graph
            # capture records nothing.
            cudnn.set_stream(handle=handle, stream=torch.cuda.current_stream().cuda_stream)
            graph.execute(pack, workspace, handle=handle)

        step("execute", run)
        torch.cuda.synchronize()
        amax_o = data["amax_o"].item()
        if not (math.isfinite(amax_o) and amax_o > 0):
            raise StepError(f"calibration run: amax_o = {amax_o}")
        data["scale_o"].fill_(E4M3_MAX / amax_o)

        out_bytes = data["o"].view(torch.uint8)
        poison_byte = 0x7F  # a NaN in E4M3

        def verify():
            left = int((out_bytes == poison_byte).sum().item())
            finite = bool(torch.isfinite(data["o"].to(torch.float32)).all().item())
            if left or not finite:
                raise StepError(
                    f"a graph replay did not write the output ({left} poisoned bytes left, finite: {finite}): "
                    "the capture recorded no cuDNN work"
                )

        timing = step("graph timing", time_graph, run, (lambda: out_bytes.fill_(poison_byte), verify))
        descale_o = 1.0 / data["scale_o"].item()
        o = to_f64(data["o"]) * descale_o
        timing["rel_l2"] = relative_l2(o, deq["q"], deq["k"], deq["v"], shape.causal, 1.0 / math.sqrt(shape.head_dim))
        timing["kv_tb_s"] = tb_per_s(shape.kv_elements(), timing["median_us"])
        timing["scale_o"] = data["scale_o"].item()
        timing["amax_o"] = amax_o
        timing["amax_s"] = data["amax_s"].item()
        return timing


def to_f64(x8):
    """An E4M3 tensor in float64 (through float32, which holds E4M3 exactly)."""
    import torch

    return x8.to(torch.float32).to(torch.float64)


def relative_l2(out, q, k, v, causal, scale):
    """||out - ref|| / ||ref||, ref = softmax(scale Q K^T) V in float64
    (query head h reads K/V head h / (Hq / Hkv); causal bottom-right: row i
    sees key j iff j <= i + Skv - Sq), computed a block of query rows at a
    time (at most 2^25 scores). Rows that see no key are zeros."""
    import torch

    b, hq, sq, _ = q.shape
    hkv, skv = k.shape[1], k.shape[2]
    group = hq // hkv
    rows = max(1, min(sq, (1 << 25) // skv))
    err = ref_sq = 0.0
    cols = torch.arange(skv, device=q.device)
    for bi in range(b):
        for hi in range(hq):
            kh = hi // group
            for r0 in range(0, sq, rows):
                r1 = min(sq, r0 + rows)
                scores = (q[bi, hi, r0:r1] @ k[bi, kh].T) * scale
                if causal:
                    last_key = torch.arange(r0, r1, device=q.device)[:, None] + (skv - sq)
                    scores.masked_fill_(cols[None, :] > last_key, float("-inf"))
                ref = torch.nan_to_num(torch.softmax(scores, dim=-1)) @ v[bi, kh]
                err += float(((out[bi, hi, r0:r1] - ref) ** 2).sum())
                ref_sq += float((ref**2).sum())
    return math.sqrt(err / ref_sq) if ref_sq > 0 else float("nan")


def row_label(r):
    """A row's shape as `sdpa bench` labels it (rows without `label` are B,H,S,D ones)."""
    if "label" in r:
        return r["label"]
    return ",".join(map(str, r["shape"])) + (",causal" if r.get("causal") else "")


def summarize(path):
    """Prints a file of this script's rows as a table: decode rows with their
    K+V rate and its fraction of the copy row's rate (the copy timed before
    them in the same run)."""
    copy_tb_s = None
    for line in open(path):
        r = json.loads(line)
        if "floor" in r:
            print(f"{'launch floor':<20} {r['floor']:<26} {r['median_us']:>10.2f} us")
        elif "copy" in r and "median_us" in r:
            copy_tb_s = r["tb_s"]
            print(f"{'copy':<20} {str(r['bytes'] >> 20) + ' MiB each way':<26} {r['median_us']:>10.2f} us"
                  f"  {r['tb_s']:.2f} TB/s read + written")
        elif "median_us" in r:
            err = f"  rel L2 {r['rel_l2']:.1e}" if "rel_l2" in r else ""
            kv = ""
            if "kv_tb_s" in r and r["shape"][2] <= DECODE_MAX_QUERIES:
                kv = f"  K+V {r['kv_tb_s']:.2f} TB/s"
                if copy_tb_s:
                    kv += f" ({100 * r['kv_tb_s'] / copy_tb_s:.0f}% of the copy)"
            print(f"{r['peer']:<20} {row_label(r):<26} {r['median_us']:>10.2f} us{kv}{err}")
        elif "error" in r:
            print(f"{r.get('peer', '?'):<20} {row_label(r):<26} error: {r['error']}")
        else:
            print(r)
    return 0


def load_cudnn_frontend(torch):
    """The `cudnn` module over the cuDNN torch loaded and its versions
    ({cudnn_frontend, cudnn_backend}), or None and the reason."""
    try:
        torch.backends.cudnn.version()  # loads libcudnn, so the frontend finds it
        import cudnn
    except Exception as e:
        return None, f"the cudnn frontend (nvidia-cudnn-frontend) is not importable: {first_line(e)}"
    try:
        return cudnn, {"cudnn_frontend": cudnn.__version__, "cudnn_backend": cudnn.backend_version()}
    except Exception as e:
        return None, f"the cudnn frontend found no cuDNN library: {first_line(e)}"


def finite_or_none(row):
    """The row with NaN and infinities as None (JSON has no NaN)."""
    return {k: (None if isinstance(x, float) and not math.isfinite(x) else x) for k, x in row.items()}


def torch_call(F, q, k, v, shape):
    """torch SDPA on a shape, as a function of nothing, and the name of the
    causal mask it applies (None when not causal): `is_causal` where Sq =
    Skv (top-left and bottom-right agree), else torch's bottom-right causal
    bias. `enable_gqa` where Hq != Hkv."""
    gqa = {"enable_gqa": True} if shape.heads_q != shape.heads_kv else {}
    if not shape.causal:
        return (lambda: F.scaled_dot_product_attention(q, k, v, **gqa)), None
    if shape.seq_q == shape.seq_kv:
        return (lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True, **gqa)), "is_causal"
    from torch.nn.attention.bias import causal_lower_right

    bias = causal_lower_right(shape.seq_q, shape.seq_kv)
    return (lambda: F.scaled_dot_product_attention(q, k, v, attn_mask=bias, **gqa)), "causal_lower_right"


def copy_row(torch):
    """The device-to-device copy: COPY_BYTES copied by torch, timed as the
    peers are; `tb_s` counts the bytes read and the bytes written."""
    src = torch.zeros(COPY_BYTES, dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    row = {"copy": "torch device-to-device copy", "bytes": COPY_BYTES, "mode": "graph"}
    row.update(time_graph(lambda: dst.copy_(src)))
    row["tb_s"] = tb_per_s(2 * COPY_BYTES, row["median_us"])
    row["sm_clock_mhz"] = sm_clocks().get("sm_clock_mhz")
    del src, dst
    torch.cuda.empty_cache()
    return row


def main(argv):
    if argv[:1] == ["--summarize"]:
        return summarize(argv[1])
    try:
        shapes = [Shape(text) for text in argv]
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
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
    cudnn, versions = load_cudnn_frontend(torch)
    fp8, fp8_missing = None, versions if cudnn is None else None
    if cudnn is not None:
        try:
            fp8 = CudnnFp8(cudnn, torch)
        except Exception as e:
            fp8_missing = first_line(e)
    # The launch floor of this harness: a one-element torch kernel, timed the
    # same way (graph replay). No "peer" key: the records skip the row.
    x = torch.zeros(1, device="cuda")
    y = torch.empty_like(x)
    floor = {
        "floor": "1-element torch add",
        "device": torch.cuda.get_device_name(),
        "torch": torch.__version__,
        "torch_cudnn": torch.backends.cudnn.version(),
    }
    if cudnn is not None:
        floor.update(versions)
    else:
        floor["cudnn_frontend_error"] = versions
    floor.update(time_graph(lambda: torch.add(x, 1, out=y)))
    # Read after the floor's replays, so an idle GPU's clock is not recorded.
    floor.update(sm_clocks())
    print(json.dumps(finite_or_none(floor)), flush=True)
    # No "peer" key either: the copy rate the decode rows are held against.
    print(json.dumps(finite_or_none(copy_row(torch))), flush=True)
    backends = {"cudnn": SDPBackend.CUDNN_ATTENTION, "flash": SDPBackend.FLASH_ATTENTION}
    dtypes = {"fp16": torch.float16, "bf16": torch.bfloat16}
    for shape in shapes:
        base = {**shape.row_fields(), "torch": torch.__version__}
        for dname, dtype in dtypes.items():
            gen = torch.Generator(device="cuda").manual_seed(0)
            q = torch.randn(*shape.q_dims(), device="cuda", dtype=dtype, generator=gen)
            k, v = (torch.randn(*shape.kv_dims(), device="cuda", dtype=dtype, generator=gen) for _ in range(2))
            for bname, backend in backends.items():
                row = {"peer": f"torch-{bname}-{dname}", "backend": f"torch-{bname}", "dtype": dname, **base}
                try:
                    fn, mask = torch_call(F, q, k, v, shape)
                    if mask is not None:
                        row["mask"] = mask
                    with sdpa_kernel([backend]):
                        fn()
                        row.update(time_graph(fn))
                    row["kv_tb_s"] = tb_per_s(shape.kv_elements() * q.element_size(), row["median_us"])
                    row["sm_clock_mhz"] = sm_clocks().get("sm_clock_mhz")
                except Exception as e:  # a backend that refuses the shape is reported, not fatal
                    row["error"] = first_line(e)
                print(json.dumps(finite_or_none(row)), flush=True)
            del q, k, v
        row = {"peer": "cudnn-fp8", "backend": "cudnn", "dtype": "fp8", **base}
        if fp8 is None:
            row["error"] = fp8_missing
        else:
            row.update(versions)
            try:
                row.update(fp8.row(shape))
                row["sm_clock_mhz"] = sm_clocks().get("sm_clock_mhz")
            except Exception as e:  # one shape's failure is its row's error; the next shape still runs
                row["error"] = first_line(e)
        print(json.dumps(finite_or_none(row)), flush=True)
        torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
