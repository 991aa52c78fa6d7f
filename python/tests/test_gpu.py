"""On a GPU: outputs against a float64 reference computed by torch on the
same (dequantized) inputs, both layouts, odd and unequal lengths, causal
masking, sliding windows and softcaps, grouped-query attention,
per-(batch, head) descales, streams, ``torch.compile`` and CUDA graphs.
Skipped where torch sees no CUDA device."""

import subprocess
import sys

import pytest
import torch

import sdpa_fp8
from sdpa_fp8 import _op

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")

E4M3 = torch.float8_e4m3fn
VARIANTS = {"mma", "wgmma", "split", "split-wg", "split-n64", "wgmma-fp8pv"}

# Relative L2 error the default kernels keep against float64 (about 4e-4 in
# f16, bf16's coarser rounding adds about 2e-3), with margin; a wrong
# mask, scale or head mapping is off by order 1.
TOLERANCE = 1e-2


def bhsd(t: torch.Tensor, layout: str) -> torch.Tensor:
    return t.transpose(1, 2) if layout == "bshd" else t


def make_inputs(b, hq, hkv, sq, skv, d, layout, seed=0):
    """Random E4M3 Q, K, V in ``layout`` and per-(batch, KV head) descales
    that differ across the batch."""
    gen = torch.Generator(device="cuda").manual_seed(seed)

    def values(heads, seq):
        shape = (b, seq, heads, d) if layout == "bshd" else (b, heads, seq, d)
        return torch.randn(shape, device="cuda", generator=gen)

    q8, qd = sdpa_fp8.quantize(values(hq, sq), num_heads_k=hkv, layout=layout)
    k8, kd = sdpa_fp8.quantize(values(hkv, skv), layout=layout)
    v8, vd = sdpa_fp8.quantize(values(hkv, skv), layout=layout)

    def spread():
        return 0.5 + 1.5 * torch.rand((b, hkv), device="cuda", generator=gen)

    return q8, k8, v8, qd * spread(), kd * spread(), vd * spread()


def visible(sq, skv, *, causal, window=(-1, -1)):
    """``[Sq, Skv]``: whether query row ``i`` sees key ``j``. Aligned
    bottom-right: row ``i`` sits at key position ``p = i + Skv - Sq`` and
    sees the keys ``p - left ..= p + right`` of ``window`` (-1: no limit on
    that side); causal masking makes the right side 0."""
    left, right = window
    if causal:
        right = 0
    p = torch.arange(sq, device="cuda")[:, None] + (skv - sq)
    j = torch.arange(skv, device="cuda")[None, :]
    seen = torch.ones(sq, skv, dtype=torch.bool, device="cuda")
    if left >= 0:
        seen &= j >= p - left
    if right >= 0:
        seen &= j <= p + right
    return seen


def capped(s: torch.Tensor, softcap: float) -> torch.Tensor:
    """Scores ``s`` as ``softcap * tanh(s / softcap)``; unchanged for 0."""
    return softcap * torch.tanh(s / softcap) if softcap else s


def scores(q8, k8, qd, kd, *, scale, causal, layout, window=(-1, -1), softcap=0.0):
    """float64 ``scale * Q K^T`` of the dequantized inputs, capped by
    ``softcap``, the keys a row does not see (``causal``, ``window``)
    ``-inf``, ``[B, Hq, Sq, Skv]``."""
    q, k = (bhsd(t, layout).double() for t in (q8, k8))
    group = q.shape[1] // k.shape[1]
    q = q * qd.double().repeat_interleave(group, dim=1)[:, :, None, None]
    k = (k * kd.double()[:, :, None, None]).repeat_interleave(group, dim=1)
    s = capped(scale * q @ k.transpose(-1, -2), softcap)
    seen = visible(q.shape[2], k.shape[2], causal=causal, window=window)
    return s.masked_fill(~seen, float("-inf"))


def reference(q8, k8, v8, qd, kd, vd, *, scale, causal, layout, window=(-1, -1), softcap=0.0):
    """float64 attention of the dequantized inputs, ``[B, Hq, Sq, D]``."""
    s = scores(q8, k8, qd, kd, scale=scale, causal=causal, layout=layout, window=window, softcap=softcap)
    v = bhsd(v8, layout).double() * vd.double()[:, :, None, None]
    v = v.repeat_interleave(s.shape[1] // v.shape[1], dim=1)
    p = torch.softmax(s, dim=-1).nan_to_num(0.0)  # a row with no key: zeros
    return p @ v


def reference_lse(q8, k8, qd, kd, *, scale, causal, layout, window=(-1, -1), softcap=0.0):
    """float64 log-sum-exp of each query row, ``[B, Hq, Sq]`` (``-inf``
    where a row sees no key)."""
    s = scores(q8, k8, qd, kd, scale=scale, causal=causal, layout=layout, window=window, softcap=softcap)
    return torch.logsumexp(s, dim=-1)


def assert_lse_close(lse: torch.Tensor, ref: torch.Tensor):
    """The log-sum-exp against float64: ``-inf`` exactly where the
    reference's is, within 1e-2 elsewhere."""
    seen = ref.isfinite()
    assert torch.equal(lse.isfinite(), seen), "rows that see no key have a log-sum-exp of -inf, the others finite"
    assert (lse.double()[seen] - ref[seen]).abs().max().item() < 1e-2


def rel_l2(out: torch.Tensor, ref: torch.Tensor) -> float:
    return ((out.double() - ref).norm() / ref.norm().clamp(min=1e-30)).item()


def assert_unseen_rows_are_empty(out: torch.Tensor, lse: torch.Tensor, ref_lse: torch.Tensor):
    """Rows that see no key (``-inf`` in the float64 ``ref_lse``, of
    ``lse``'s shape, ``out`` with one more dimension): O exactly 0 and the
    log-sum-exp exactly ``-inf``."""
    unseen = ref_lse.isinf()
    assert not bool(out[unseen].float().any()), "a row that sees no key is not zeros"
    assert bool((lse[unseen] == float("-inf")).all()), "a row that sees no key has a log-sum-exp other than -inf"


def assert_changed_by(ref: torch.Tensor, *others: torch.Tensor):
    """``ref`` differs from each of ``others`` (references without some of
    the options under test) by far more than the tolerance, so a call that
    drops those options fails."""
    for other in others:
        assert rel_l2(other, ref) > 3 * TOLERANCE, "the options under test hardly change the result"


@pytest.fixture
def poisoned_outputs(monkeypatch):
    """The ops' outputs (O and the log-sum-exp, in either layout path) come
    filled with NaN instead of uninitialized, so a row the kernels leave
    unwritten shows."""
    uninitialized = _op._outputs

    def outputs(q: torch.Tensor, out_dtype: torch.dtype, return_lse: bool) -> tuple[torch.Tensor, torch.Tensor]:
        out, lse = uninitialized(q, out_dtype, return_lse)
        return out.fill_(float("nan")), lse.fill_(float("nan"))

    monkeypatch.setattr(_op, "_outputs", outputs)


def strided(t: torch.Tensor) -> torch.Tensor:
    """``[B, S, H, D]`` E4M3 ``t``'s values as the first half of the heads
    of a tensor of twice as many: contiguous in neither layout."""
    doubled = torch.cat([t.view(torch.uint8)] * 2, dim=2).view(E4M3)
    return doubled[:, :, : t.shape[2]]


SHAPES = [
    # B, Hq, Hkv, Sq, Skv, D, causal
    (1, 1, 1, 1, 1, 64, False),
    (2, 4, 4, 77, 77, 64, False),
    (2, 4, 4, 77, 77, 64, True),
    (1, 8, 2, 130, 250, 128, True),
    (1, 4, 1, 300, 100, 64, True),
    (3, 6, 3, 513, 1000, 128, False),
    (2, 8, 8, 256, 256, 64, False),
    (1, 16, 16, 2048, 2048, 64, True),
    (1, 8, 8, 1111, 1111, 128, True),
]


@pytest.mark.parametrize("layout", ["bshd", "bhsd"])
@pytest.mark.parametrize(("b", "hq", "hkv", "sq", "skv", "d", "causal"), SHAPES)
def test_matches_a_float64_reference(b, hq, hkv, sq, skv, d, causal, layout):
    q8, k8, v8, qd, kd, vd = make_inputs(b, hq, hkv, sq, skv, d, layout)
    out = sdpa_fp8.attention(q8, k8, v8, q_descale=qd, k_descale=kd, v_descale=vd, causal=causal, layout=layout)
    expected_shape = (b, sq, hq, d) if layout == "bshd" else (b, hq, sq, d)
    assert tuple(out.shape) == expected_shape and out.dtype == torch.bfloat16
    ref = reference(q8, k8, v8, qd, kd, vd, scale=d**-0.5, causal=causal, layout=layout)
    assert not bool(out.isnan().any())
    assert rel_l2(bhsd(out, layout), ref) < TOLERANCE
    if causal and sq > skv:
        # The first sq - skv query rows see no key: exactly zero.
        assert not bool(bhsd(out, layout)[:, :, : sq - skv].any())


@pytest.mark.parametrize("out_dtype", [torch.float16, torch.bfloat16])
def test_output_types_softmax_scale_and_default_descales(out_dtype):
    q8, k8, v8, _, _, _ = make_inputs(2, 4, 2, 100, 160, 64, "bshd", seed=1)
    out = sdpa_fp8.attention(q8, k8, v8, softmax_scale=0.05, out_dtype=out_dtype)
    assert out.dtype == out_dtype
    ones = torch.ones(2, 2, device="cuda")
    ref = reference(q8, k8, v8, ones, ones, ones, scale=0.05, causal=False, layout="bshd")
    assert rel_l2(bhsd(out, "bshd"), ref) < TOLERANCE


def test_strided_bhsd_inputs_are_copied_and_give_the_same_output():
    q8, k8, v8, qd, kd, vd = make_inputs(1, 4, 4, 64, 64, 64, "bhsd", seed=2)
    contiguous = sdpa_fp8.attention(q8, k8, v8, q_descale=qd, k_descale=kd, v_descale=vd, layout="bhsd")
    # The same values, stored [B, S, H, D] and seen as [B, H, S, D].
    strided = [t.transpose(1, 2).contiguous().transpose(1, 2) for t in (q8, k8, v8)]
    assert not strided[0].is_contiguous()
    out = sdpa_fp8.attention(*strided, q_descale=qd, k_descale=kd, v_descale=vd, layout="bhsd")
    assert torch.equal(out, contiguous)


def test_runs_on_the_current_stream():
    q8, k8, v8, qd, kd, vd = make_inputs(2, 8, 8, 512, 512, 128, "bhsd", seed=3)
    expected = sdpa_fp8.attention(q8, k8, v8, q_descale=qd, k_descale=kd, v_descale=vd, layout="bhsd")
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        # Inputs written and read on the side stream, in its order only.
        q2 = q8.view(torch.uint8).clone().view(E4M3)
        out = sdpa_fp8.attention(q2, k8, v8, q_descale=qd, k_descale=kd, v_descale=vd, layout="bhsd")
        first = out.float().clone()
    side.synchronize()
    assert torch.equal(first, expected.float())


def test_errors_on_the_gpu_are_python_exceptions():
    q8, k8, v8, qd, _kd, _vd = make_inputs(1, 2, 2, 64, 64, 64, "bhsd", seed=4)
    with pytest.raises(ValueError, match="q_descale is on cpu"):
        sdpa_fp8.attention(q8, k8, v8, q_descale=qd.cpu(), layout="bhsd")
    # Contiguous, but one byte past a 16-byte boundary: the kernels need 16.
    storage = torch.zeros(q8.numel() + 16, dtype=torch.uint8, device="cuda")
    misaligned = storage[1 : 1 + q8.numel()].view(q8.shape).view(E4M3)
    with pytest.raises(ValueError, match="not 16-byte aligned"):
        sdpa_fp8.attention(misaligned, k8, v8, layout="bhsd")


def test_recommended_variant_names_a_variant():
    name = sdpa_fp8.recommended_variant((2, 256, 8, 64), (2, 256, 8, 64))
    assert name in VARIANTS
    assert sdpa_fp8.recommended_variant((1, 16, 16384, 128), (1, 16, 16384, 128), layout="bhsd") in VARIANTS


def test_opcheck_of_the_custom_op():
    q8, k8, v8, qd, kd, vd = make_inputs(1, 4, 2, 96, 80, 64, "bhsd", seed=5)
    args = (q8, k8, v8, qd, kd, vd, 0.125, True, torch.bfloat16, False)
    # opcheck's "test_schema" compares inputs with arithmetic float8 lacks
    # ("mul_cuda" not implemented for Float8_e4m3fn), so the schema's promise
    # that no input is written is checked here on the raw bytes instead.
    before = [t.view(torch.uint8).clone() if t.dtype == torch.float8_e4m3fn else t.clone() for t in args[:6]]
    torch.library.opcheck(torch.ops.sdpa_fp8.attention.default, args, test_utils=("test_faketensor",))
    after = [t.view(torch.uint8) if t.dtype == torch.float8_e4m3fn else t for t in args[:6]]
    for b, a in zip(before, after, strict=True):
        assert torch.equal(b, a), "the op wrote one of its inputs"


def test_torch_compile_traces_a_function_that_calls_it():
    torch._dynamo.reset()

    def block(q, k, v):
        q8, qd = sdpa_fp8.quantize(q, num_heads_k=k.shape[2])
        k8, kd = sdpa_fp8.quantize(k)
        v8, vd = sdpa_fp8.quantize(v)
        o = sdpa_fp8.attention(q8, k8, v8, q_descale=qd, k_descale=kd, v_descale=vd, causal=True)
        return o.float().sum(dim=-1)

    gen = torch.Generator(device="cuda").manual_seed(6)
    q = torch.randn(2, 200, 8, 128, device="cuda", generator=gen, dtype=torch.bfloat16)
    k = torch.randn(2, 300, 2, 128, device="cuda", generator=gen, dtype=torch.bfloat16)
    v = torch.randn(2, 300, 2, 128, device="cuda", generator=gen, dtype=torch.bfloat16)
    compiled = torch.compile(block, fullgraph=True)
    got, expected = compiled(q, k, v), block(q, k, v)
    assert got.shape == expected.shape
    assert rel_l2(got, expected.double()) < TOLERANCE


def test_cuda_graph_capture_and_replay():
    q8, k8, v8, qd, kd, vd = make_inputs(2, 8, 2, 256, 384, 64, "bhsd", seed=7)
    kwargs = {"q_descale": qd, "k_descale": kd, "v_descale": vd, "causal": True, "layout": "bhsd"}
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        sdpa_fp8.attention(q8, k8, v8, **kwargs)  # the run before capture (see README)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=stream):
        static_out = sdpa_fp8.attention(q8, k8, v8, **kwargs)

    # New values into the captured buffers, then replay.
    n8, nk8, nv8, nqd, nkd, nvd = make_inputs(2, 8, 2, 256, 384, 64, "bhsd", seed=8)
    for dst, src in ((q8, n8), (k8, nk8), (v8, nv8)):
        dst.view(torch.uint8).copy_(src.view(torch.uint8))
    for dst, src in ((qd, nqd), (kd, nkd), (vd, nvd)):
        dst.copy_(src)
    graph.replay()
    torch.cuda.synchronize()
    ref = reference(q8, k8, v8, qd, kd, vd, scale=64**-0.5, causal=True, layout="bhsd")
    assert rel_l2(static_out, ref) < TOLERANCE

    # An ordinary call on the stream with other inputs (other values at
    # other addresses) afterwards must not disturb what the graph reads:
    # replay again and compare.
    o8, ok8, ov8, _, _, _ = make_inputs(2, 8, 2, 256, 384, 64, "bhsd", seed=10)
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        sdpa_fp8.attention(o8, ok8, ov8, **kwargs)
    replayed = static_out.clone()
    graph.replay()
    torch.cuda.synchronize()
    assert torch.equal(static_out, replayed)
    assert rel_l2(static_out, ref) < TOLERANCE


def test_a_capture_on_another_stream_with_bshd_copies():
    """One run of the shapes on any stream before the capture is enough: the
    capture (on torch's own capture stream) takes that run's workspace, and
    the copies of strided bshd inputs, made inside the capture at addresses
    no run has seen, get tensor maps of their own."""
    q8, k8, v8, qd, kd, vd = make_inputs(1, 4, 2, 200, 300, 64, "bshd", seed=9)
    kwargs = {"q_descale": qd, "k_descale": kd, "v_descale": vd, "causal": True}
    q8, k8, v8 = strided(q8), strided(k8), strided(v8)
    sdpa_fp8.attention(q8, k8, v8, **kwargs)  # on the current stream
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = sdpa_fp8.attention(q8, k8, v8, **kwargs)
    n8, nk8, nv8, _, _, _ = make_inputs(1, 4, 2, 200, 300, 64, "bshd", seed=11)
    for dst, src in ((q8, n8), (k8, nk8), (v8, nv8)):
        dst.view(torch.uint8).copy_(src.view(torch.uint8))
    graph.replay()
    torch.cuda.synchronize()
    ref = reference(q8, k8, v8, qd, kd, vd, scale=64**-0.5, causal=True, layout="bshd")
    assert rel_l2(bhsd(out, "bshd"), ref) < TOLERANCE


def test_a_capture_before_any_run_on_the_device_is_refused_cleanly():
    """In a fresh process, the first call on the device inside a capture
    would load the kernels: refused with a RuntimeError that says what to
    do, before anything is recorded."""
    script = """
import torch, sdpa_fp8
q = torch.zeros(1, 64, 2, 64, device="cuda").to(torch.float8_e4m3fn)
graph = torch.cuda.CUDAGraph()
try:
    with torch.cuda.graph(graph):
        sdpa_fp8.attention(q, q, q)
except RuntimeError as e:
    print("refused:", e)
"""
    done = subprocess.run([sys.executable, "-c", script], check=False, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "refused: the first call on a CUDA device loads the kernels" in done.stdout
    assert "before capturing" in done.stdout


hopper_only = pytest.mark.skipif(
    not torch.cuda.is_available() or torch.cuda.get_device_capability() != (9, 0),
    reason="packed batches and [B, S, H, D] tensors read in place run on sm_90a only",
)

# Contiguous [B, S, H, D] inputs: read in place where the variant the
# library recommends reads that layout (the wgmma variants, on Hopper, and
# decode with one query row per sequence), copied otherwise; the output is
# [B, Sq, Hq, D] contiguous either way.
IN_PLACE_VARIANTS = {"wgmma", "wgmma-fp8pv"}


def reads_in_place(variant, sq):
    """Whether ``variant`` reads contiguous [B, S, H, D] inputs of ``sq``
    query rows per sequence in place."""
    return variant in IN_PLACE_VARIANTS or (variant == "decode" and sq == 1)


def copies_made(call):
    """What ``call()`` returns, and how many tensor copies (``aten::copy_``,
    which ``contiguous``, ``clone`` and ``copy_`` run) torch made for it."""
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        result = call()
    return result, sum(event.count for event in prof.key_averages() if event.key == "aten::copy_")


def bhsd_copies(*tensors):
    """``[B, S, H, D]`` E4M3 tensors copied into ``[B, H, S, D]``."""
    return [t.transpose(1, 2).view(torch.uint8).contiguous().view(E4M3) for t in tensors]


def same_bits(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Whether two 16-bit tensors hold the same bits (NaN included)."""
    return torch.equal(a.view(torch.int16), b.view(torch.int16))


@hopper_only
@pytest.mark.parametrize(
    ("b", "hq", "hkv", "sq", "skv", "d", "causal", "out_dtype"),
    [
        # Past the cost model's 2048 keys, with more keys a query block
        # sees than the split family takes: the recommendation is wgmma.
        (1, 4, 2, 4096, 3000, 128, True, torch.bfloat16),
        (3, 4, 4, 333, 2500, 64, False, torch.float16),
        (2, 6, 3, 1000, 4100, 128, False, torch.bfloat16),
    ],
)
def test_contiguous_bshd_inputs_are_read_in_place_with_the_bhsd_runs_bits(b, hq, hkv, sq, skv, d, causal, out_dtype):
    q8, k8, v8, qd, kd, vd = make_inputs(b, hq, hkv, sq, skv, d, "bshd", seed=30)
    kwargs = {"q_descale": qd, "k_descale": kd, "v_descale": vd, "causal": causal, "out_dtype": out_dtype}
    variant = sdpa_fp8.recommended_variant(q8.shape, k8.shape, causal=causal, out_dtype=out_dtype)
    assert variant == "wgmma", f"these shapes were picked for the wgmma variant, the library recommends {variant}"
    sdpa_fp8.attention(q8, k8, v8, **kwargs)  # plans and allocates the workspace
    out, copies = copies_made(lambda: sdpa_fp8.attention(q8, k8, v8, **kwargs))
    assert copies == 0, "contiguous [B, S, H, D] inputs on wgmma are read in place"
    assert tuple(out.shape) == (b, sq, hq, d) and out.is_contiguous() and out.dtype == out_dtype
    expected = sdpa_fp8.attention(*bhsd_copies(q8, k8, v8), **kwargs, layout="bhsd")
    assert same_bits(out, expected.transpose(1, 2)), "the [B, H, S, D] run of the same inputs gives other bits"
    ref = reference(q8, k8, v8, qd, kd, vd, scale=d**-0.5, causal=causal, layout="bshd")
    assert rel_l2(bhsd(out, "bshd"), ref) < TOLERANCE

    # The log-sum-exp, written in place in the output's row order.
    (out, lse), copies = copies_made(lambda: sdpa_fp8.attention(q8, k8, v8, **kwargs, return_lse=True))
    assert copies == 0 and same_bits(out, expected.transpose(1, 2))
    assert tuple(lse.shape) == (b, sq, hq) and lse.is_contiguous() and lse.dtype == torch.float32
    _, expected_lse = sdpa_fp8.attention(*bhsd_copies(q8, k8, v8), **kwargs, layout="bhsd", return_lse=True)
    assert tuple(expected_lse.shape) == (b, hq, sq)
    torch.testing.assert_close(lse, expected_lse.transpose(1, 2), rtol=1e-6, atol=1e-5)
    ref_lse = reference_lse(q8, k8, qd, kd, scale=d**-0.5, causal=causal, layout="bshd")
    assert_lse_close(lse.transpose(1, 2), ref_lse)


@pytest.mark.parametrize(
    ("b", "hq", "hkv", "sq", "skv", "d"),
    [
        (4, 32, 8, 1, 4096, 128),  # decode: one query per sequence
        (8, 32, 8, 4, 8192, 64),
        (2, 8, 2, 500, 700, 128),
    ],
)
def test_bshd_inputs_are_copied_where_the_recommended_variant_cannot_read_them(b, hq, hkv, sq, skv, d):
    q8, k8, v8, qd, kd, vd = make_inputs(b, hq, hkv, sq, skv, d, "bshd", seed=31)
    kwargs = {"q_descale": qd, "k_descale": kd, "v_descale": vd}
    in_place = reads_in_place(sdpa_fp8.recommended_variant(q8.shape, k8.shape), sq)
    sdpa_fp8.attention(q8, k8, v8, **kwargs)
    out, copies = copies_made(lambda: sdpa_fp8.attention(q8, k8, v8, **kwargs))
    # In place: no copy; otherwise Q, K, V in and the output back.
    assert copies == (0 if in_place else 4)
    assert tuple(out.shape) == (b, sq, hq, d) and out.is_contiguous()
    expected = sdpa_fp8.attention(*bhsd_copies(q8, k8, v8), **kwargs, layout="bhsd")
    assert same_bits(out, expected.transpose(1, 2))


@pytest.mark.parametrize(
    ("b", "hq", "hkv", "sq", "skv", "d"),
    [
        (2, 8, 2, 300, 300, 64),  # split: copied
        (1, 4, 2, 4096, 3000, 128),  # wgmma: in place
    ],
)
def test_strided_bshd_inputs_are_read_in_place_where_the_variant_can(b, hq, hkv, sq, skv, d):
    q8, k8, v8, qd, kd, vd = make_inputs(b, hq, hkv, sq, skv, d, "bshd", seed=32)
    kwargs = {"q_descale": qd, "k_descale": kd, "v_descale": vd, "causal": True}
    expected = sdpa_fp8.attention(*bhsd_copies(q8, k8, v8), **kwargs, layout="bhsd")
    in_place = reads_in_place(sdpa_fp8.recommended_variant(q8.shape, k8.shape, causal=True), sq)
    # Half of the heads of tensors of twice as many: rows strided.
    inputs = [strided(t) for t in (q8, k8, v8)]
    sdpa_fp8.attention(*inputs, **kwargs)
    out, copies = copies_made(lambda: sdpa_fp8.attention(*inputs, **kwargs))
    # In place: no copy; otherwise Q, K, V in and the output back.
    assert copies == (0 if in_place else 4)
    assert tuple(out.shape) == (b, sq, hq, d) and out.is_contiguous()
    assert same_bits(out, expected.transpose(1, 2))
    # [B, H, S, D] memory seen as [B, S, H, D] (batches not S rows apart)
    # is read in place by the [B, H, S, D] kernels: no copy.
    transposed = bhsd_copies(q8, k8, v8)
    out, copies = copies_made(lambda: sdpa_fp8.attention(*(t.transpose(1, 2) for t in transposed), **kwargs))
    assert copies == 0 and same_bits(out, expected.transpose(1, 2))


@hopper_only
@pytest.mark.parametrize(
    ("b", "h", "sq", "skv", "d"),
    [
        (2, 8, 3000, 3000, 128),  # wgmma
        (4, 8, 1, 4096, 64),  # decode: Q copied, K and V read in place
    ],
)
def test_slices_of_a_fused_qkv_are_read_in_place(b, h, sq, skv, d):
    q8, k8, v8, qd, kd, vd = make_inputs(b, h, h, sq, skv, d, "bshd", seed=34)
    kwargs = {"q_descale": qd, "k_descale": kd, "v_descale": vd, "causal": True}
    expected = sdpa_fp8.attention(q8, k8, v8, **kwargs)

    def fused(*tensors):
        """The tensors' rows side by side, as one fused projection's."""
        return torch.stack([t.view(torch.uint8) for t in tensors], dim=2).view(E4M3)

    kv = fused(k8, v8)  # [B, Skv, 2, H, D]
    q = fused(q8, q8)[:, :, 0]
    k, v = kv[:, :, 0], kv[:, :, 1]
    assert not (q.is_contiguous() or k.is_contiguous() or v.is_contiguous())
    sdpa_fp8.attention(q, k, v, **kwargs)
    (out, lse), copies = copies_made(lambda: sdpa_fp8.attention(q, k, v, **kwargs, return_lse=True))
    assert copies == (1 if sq <= 16 else 0), "a fused QKV's slices are read in place (decode copies Q)"
    assert same_bits(out, expected)
    _, expected_lse = sdpa_fp8.attention(q8, k8, v8, **kwargs, return_lse=True)
    assert torch.equal(lse, expected_lse)


@hopper_only
@pytest.mark.parametrize("skv", [80, 2500])  # copied (split), in place (wgmma)
def test_opcheck_of_the_bshd_op(skv):
    q8, k8, v8, qd, kd, vd = make_inputs(1, 4, 2, 96, skv, 64, "bshd", seed=33)
    # Every variant writes the log-sum-exp, in place or through the packed twins.
    args = (q8, k8, v8, qd, kd, vd, 0.125, False, torch.bfloat16, True)
    before = [t.view(torch.uint8).clone() if t.dtype == E4M3 else t.clone() for t in args[:6]]
    torch.library.opcheck(torch.ops.sdpa_fp8.attention_bshd.default, args, test_utils=("test_faketensor",))
    after = [t.view(torch.uint8) if t.dtype == E4M3 else t for t in args[:6]]
    for b, a in zip(before, after, strict=True):
        assert torch.equal(b, a), "the op wrote one of its inputs"


@hopper_only
def test_bshd_in_place_cuda_graph_capture_and_replay():
    q8, k8, v8, qd, kd, vd = make_inputs(1, 8, 2, 512, 2500, 128, "bshd", seed=34)
    kwargs = {"q_descale": qd, "k_descale": kd, "v_descale": vd, "causal": True}
    assert sdpa_fp8.recommended_variant(q8.shape, k8.shape, causal=True) in IN_PLACE_VARIANTS
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        sdpa_fp8.attention(q8, k8, v8, **kwargs)  # the run before capture
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=stream):
        static_out = sdpa_fp8.attention(q8, k8, v8, **kwargs)
    assert static_out.is_contiguous()

    n8, nk8, nv8, nqd, nkd, nvd = make_inputs(1, 8, 2, 512, 2500, 128, "bshd", seed=35)
    for dst, src in ((q8, n8), (k8, nk8), (v8, nv8)):
        dst.view(torch.uint8).copy_(src.view(torch.uint8))
    for dst, src in ((qd, nqd), (kd, nkd), (vd, nvd)):
        dst.copy_(src)
    graph.replay()
    torch.cuda.synchronize()
    ref = reference(q8, k8, v8, qd, kd, vd, scale=128**-0.5, causal=True, layout="bshd")
    assert rel_l2(bhsd(static_out, "bshd"), ref) < TOLERANCE


@hopper_only
@pytest.mark.parametrize(("b", "hq", "hkv", "sq", "skv", "d"), [(4, 32, 8, 1, 4096, 128), (8, 32, 8, 4, 8192, 64)])
def test_decode_shapes_log_sum_exp_comes_back_in_the_outputs_row_order(b, hq, hkv, sq, skv, d):
    q8, k8, v8, qd, kd, vd = make_inputs(b, hq, hkv, sq, skv, d, "bshd", seed=36)
    kwargs = {"q_descale": qd, "k_descale": kd, "v_descale": vd, "return_lse": True}
    assert sdpa_fp8.recommended_variant(q8.shape, k8.shape) == "decode"
    out, lse = sdpa_fp8.attention(q8, k8, v8, **kwargs)
    assert tuple(lse.shape) == (b, sq, hq) and lse.is_contiguous()
    expected, expected_lse = sdpa_fp8.attention(*bhsd_copies(q8, k8, v8), **kwargs, layout="bhsd")
    assert same_bits(out, expected.transpose(1, 2))
    assert torch.equal(lse, expected_lse.transpose(1, 2))
    ref_lse = reference_lse(q8, k8, qd, kd, scale=d**-0.5, causal=False, layout="bshd")
    assert_lse_close(expected_lse, ref_lse)


def test_the_split_family_returns_the_log_sum_exp_too():
    q8, k8, v8, qd, kd, vd = make_inputs(1, 2, 2, 64, 64, 64, "bshd", seed=37)
    assert sdpa_fp8.recommended_variant(q8.shape, k8.shape) not in IN_PLACE_VARIANTS | {"decode"}
    out, lse = sdpa_fp8.attention(q8, k8, v8, q_descale=qd, k_descale=kd, v_descale=vd, return_lse=True)
    options = {"scale": 64**-0.5, "causal": False, "layout": "bshd"}
    assert rel_l2(bhsd(out, "bshd"), reference(q8, k8, v8, qd, kd, vd, **options)) < TOLERANCE
    assert_lse_close(bhsd(lse, "bshd"), reference_lse(q8, k8, qd, kd, **options))


# Sliding windows and softcaps, which run on the wgmma variants (Hopper)
# and decode: B, Hq, Hkv, Sq, Skv, D, causal, window_size, softcap.
SCORE_CASES = [
    (1, 8, 2, 500, 700, 128, False, (128, 32), 0.0),  # a window on both sides
    (2, 4, 4, 333, 333, 64, True, (50, -1), 0.0),  # causal makes the right side 0
    (1, 4, 2, 300, 100, 64, False, (10, 5), 0.0),  # the first 195 rows' windows hold no key
    (2, 8, 8, 256, 256, 128, False, (-1, -1), 4.0),  # a cap alone
    (1, 8, 2, 1000, 1000, 128, True, (256, -1), 4.0),  # both
]


@hopper_only
@pytest.mark.parametrize("layout", ["bshd", "bhsd"])
@pytest.mark.parametrize(("b", "hq", "hkv", "sq", "skv", "d", "causal", "window", "softcap"), SCORE_CASES)
def test_a_window_and_a_softcap_match_a_float64_reference(
    b, hq, hkv, sq, skv, d, causal, window, softcap, layout, poisoned_outputs
):
    q8, k8, v8, qd, kd, vd = make_inputs(b, hq, hkv, sq, skv, d, layout, seed=40)
    kwargs = {"q_descale": qd, "k_descale": kd, "v_descale": vd, "window_size": window, "softcap": softcap}
    out, lse = sdpa_fp8.attention(q8, k8, v8, **kwargs, causal=causal, layout=layout, return_lse=True)
    expected_shape = (b, sq, hq, d) if layout == "bshd" else (b, hq, sq, d)
    assert tuple(out.shape) == expected_shape and tuple(lse.shape) == expected_shape[:3]
    out, lse = bhsd(out, layout), bhsd(lse, layout)
    options = {"scale": d**-0.5, "causal": causal, "layout": layout}
    ref = reference(q8, k8, v8, qd, kd, vd, **options, window=window, softcap=softcap)
    assert_changed_by(ref, reference(q8, k8, v8, qd, kd, vd, **options))
    assert not bool(out.isnan().any())
    assert rel_l2(out, ref) < TOLERANCE
    ref_lse = reference_lse(q8, k8, qd, kd, **options, window=window, softcap=softcap)
    assert_lse_close(lse, ref_lse)
    assert_unseen_rows_are_empty(out, lse, ref_lse)


@hopper_only
@pytest.mark.parametrize(
    ("b", "hq", "hkv", "sq", "skv", "d", "window", "in_place"),
    [
        # Prefill: a wgmma variant reads [B, S, H, D] in place (its first
        # 1096 rows' windows hold no key).
        (1, 4, 2, 4096, 3000, 128, (1024, 0), True),
        # Decode, one query per sequence: read in place.
        (4, 32, 8, 1, 4096, 128, (512, 0), True),
        # Decode, four: copied into [B, H, S, D] for decode and back.
        (8, 32, 8, 4, 8192, 64, (512, 0), False),
    ],
)
def test_a_window_and_a_softcap_reach_the_kernels_in_place_and_through_copies(
    b, hq, hkv, sq, skv, d, window, in_place, poisoned_outputs
):
    q8, k8, v8, qd, kd, vd = make_inputs(b, hq, hkv, sq, skv, d, "bshd", seed=41)
    softcap = 3.0
    variant = sdpa_fp8.recommended_variant(q8.shape, k8.shape, window_size=window, softcap=softcap)
    assert reads_in_place(variant, sq) == in_place, f"the library plans {variant} for these shapes"
    kwargs = {"q_descale": qd, "k_descale": kd, "v_descale": vd, "window_size": window, "softcap": softcap}
    sdpa_fp8.attention(q8, k8, v8, **kwargs, return_lse=True)  # plans and allocates the workspace
    (out, lse), copies = copies_made(lambda: sdpa_fp8.attention(q8, k8, v8, **kwargs, return_lse=True))
    # In place: no copy; otherwise Q, K and V in, O and the log-sum-exp back.
    assert copies == (0 if in_place else 5)
    assert tuple(out.shape) == (b, sq, hq, d) and out.is_contiguous()
    assert tuple(lse.shape) == (b, sq, hq) and lse.is_contiguous()
    options = {"scale": d**-0.5, "causal": False, "layout": "bshd"}
    ref = reference(q8, k8, v8, qd, kd, vd, **options, window=window, softcap=softcap)
    window_alone = reference(q8, k8, v8, qd, kd, vd, **options, window=window)
    cap_alone = reference(q8, k8, v8, qd, kd, vd, **options, softcap=softcap)
    assert_changed_by(ref, window_alone, cap_alone)
    out, lse = bhsd(out, "bshd"), bhsd(lse, "bshd")
    assert not bool(out.isnan().any())
    assert rel_l2(out, ref) < TOLERANCE
    ref_lse = reference_lse(q8, k8, qd, kd, **options, window=window, softcap=softcap)
    assert_lse_close(lse, ref_lse)
    assert_unseen_rows_are_empty(out, lse, ref_lse)


@hopper_only
def test_a_window_or_a_softcap_runs_on_the_recommendations_twins():
    q8, k8, v8, qd, kd, vd = make_inputs(1, 2, 2, 64, 64, 64, "bshd", seed=42)
    recommended = sdpa_fp8.recommended_variant(q8.shape, k8.shape)
    assert recommended not in IN_PLACE_VARIANTS | {"decode"}
    descales = {"q_descale": qd, "k_descale": kd, "v_descale": vd}
    options = {"scale": 64**-0.5, "causal": False, "layout": "bshd"}
    for window, softcap in (((16, 0), 0.0), ((-1, -1), 3.0)):
        scores_kwargs = {"window_size": window, "softcap": softcap}
        ref = reference(q8, k8, v8, qd, kd, vd, **options, window=window, softcap=softcap)
        assert sdpa_fp8.recommended_variant(q8.shape, k8.shape, **scores_kwargs) == recommended
        out, lse = sdpa_fp8.attention(q8, k8, v8, **descales, **scores_kwargs, return_lse=True)
        assert rel_l2(bhsd(out, "bshd"), ref) < TOLERANCE
        assert_lse_close(bhsd(lse, "bshd"), reference_lse(q8, k8, qd, kd, **options, window=window, softcap=softcap))


@hopper_only
def test_opcheck_of_the_bshd_op_with_a_window_and_a_softcap():
    q8, k8, v8, qd, kd, vd = make_inputs(1, 4, 2, 96, 300, 64, "bshd", seed=43)
    args = (q8, k8, v8, qd, kd, vd, 0.125, True, torch.bfloat16, True, 64, 0, 30.0)
    before = [t.view(torch.uint8).clone() if t.dtype == E4M3 else t.clone() for t in args[:6]]
    torch.library.opcheck(torch.ops.sdpa_fp8.attention_bshd.default, args, test_utils=("test_faketensor",))
    after = [t.view(torch.uint8) if t.dtype == E4M3 else t for t in args[:6]]
    for b, a in zip(before, after, strict=True):
        assert torch.equal(b, a), "the op wrote one of its inputs"


# attention_varlen: packed batches of sequences of their own lengths, each
# sequence against the float64 reference, on Hopper only.

# (query rows, key rows) per sequence: equal, longer keys, longer queries
# (causal rows that see no key), an empty sequence, one with no keys.
VARLEN_SEQS = [(77, 77), (130, 250), (300, 100), (0, 50), (1, 1), (64, 0), (513, 1000)]


def make_packed(seqs, hq, hkv, d, seed=0):
    """Random packed E4M3 Q, K, V, their int32 prefix sums and per-(sequence,
    KV head) descales that differ across the batch."""
    gen = torch.Generator(device="cuda").manual_seed(seed)
    lens_q = torch.tensor([0] + [sq for sq, _ in seqs])
    lens_k = torch.tensor([0] + [sk for _, sk in seqs])
    cu_q = lens_q.cumsum(0).to(torch.int32).cuda()
    cu_k = lens_k.cumsum(0).to(torch.int32).cuda()
    total_q, total_k = int(cu_q[-1]), int(cu_k[-1])

    def codes(rows, heads):
        x = torch.randn(1, rows, heads, d, device="cuda", generator=gen)
        return sdpa_fp8.quantize(x)[0][0]

    def descale():
        return 0.002 + 0.01 * torch.rand((len(seqs), hkv), device="cuda", generator=gen)

    q8, k8, v8 = codes(total_q, hq), codes(total_k, hkv), codes(total_k, hkv)
    return q8, k8, v8, cu_q, cu_k, descale(), descale(), descale()


def packed_reference(q8, k8, v8, cu_q, cu_k, qd, kd, vd, *, scale, causal, window=(-1, -1), softcap=0.0):
    """float64 O ``[total_q, Hq, D]`` and log-sum-exp ``[total_q, Hq]``,
    sequence by sequence (each one's window aligned bottom-right in it)."""
    hq, hkv = q8.shape[1], k8.shape[1]
    group = hq // hkv
    out = torch.zeros(q8.shape, dtype=torch.float64, device="cuda")
    lse = torch.full(q8.shape[:2], float("-inf"), dtype=torch.float64, device="cuda")
    for b in range(len(cu_q) - 1):
        (q0, q1), (k0, k1) = cu_q[b : b + 2].tolist(), cu_k[b : b + 2].tolist()
        if q1 == q0 or k1 == k0:
            continue  # no rows, or rows that see no key: zeros, -inf
        q = q8[q0:q1].double().transpose(0, 1) * qd[b].double().repeat_interleave(group)[:, None, None]
        k = (k8[k0:k1].double().transpose(0, 1) * kd[b].double()[:, None, None]).repeat_interleave(group, dim=0)
        v = (v8[k0:k1].double().transpose(0, 1) * vd[b].double()[:, None, None]).repeat_interleave(group, dim=0)
        s = capped(scale * q @ k.transpose(-1, -2), softcap)  # [Hq, sq, sk]
        s = s.masked_fill(~visible(q1 - q0, k1 - k0, causal=causal, window=window), float("-inf"))
        p = torch.softmax(s, dim=-1).nan_to_num(0.0)
        out[q0:q1] = (p @ v).transpose(0, 1)
        lse[q0:q1] = torch.logsumexp(s, dim=-1).transpose(0, 1)
    return out, lse


@hopper_only
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize(("hq", "hkv", "d"), [(8, 2, 64), (4, 4, 128)])
def test_varlen_matches_a_float64_reference_with_its_log_sum_exp(hq, hkv, d, causal):
    q8, k8, v8, cu_q, cu_k, qd, kd, vd = make_packed(VARLEN_SEQS, hq, hkv, d, seed=20)
    max_q, max_k = max(sq for sq, _ in VARLEN_SEQS), max(sk for _, sk in VARLEN_SEQS)
    out, lse = sdpa_fp8.attention_varlen(
        q8, k8, v8, cu_q, cu_k, max_q, max_k, q_descale=qd, k_descale=kd, v_descale=vd, causal=causal, return_lse=True
    )
    assert tuple(out.shape) == tuple(q8.shape) and out.dtype == torch.bfloat16
    assert tuple(lse.shape) == tuple(q8.shape[:2]) and lse.dtype == torch.float32
    ref, ref_lse = packed_reference(q8, k8, v8, cu_q, cu_k, qd, kd, vd, scale=d**-0.5, causal=causal)
    assert not bool(out.isnan().any())
    assert rel_l2(out, ref) < TOLERANCE
    seen = ref_lse.isfinite()
    assert torch.equal(lse.isfinite(), seen), "rows that see no key have a log-sum-exp of -inf, the others finite"
    assert (lse.double()[seen] - ref_lse[seen]).abs().max().item() < 1e-2
    # Rows that see no key are exactly zero.
    assert not bool(out[~seen.all(dim=1)].float().any())


@hopper_only
def test_varlen_default_descales_f16_and_a_longer_max_seqlen():
    seqs = [(100, 160), (33, 20)]
    q8, k8, v8, cu_q, cu_k, _, _, _ = make_packed(seqs, 4, 2, 64, seed=21)
    ones = torch.ones(2, 2, device="cuda")
    ref, _ = packed_reference(q8, k8, v8, cu_q, cu_k, ones, ones, ones, scale=0.05, causal=False)
    for max_q, max_k in ((100, 160), (128, 512)):  # FlashAttention's max_seqlen may exceed the longest
        out = sdpa_fp8.attention_varlen(
            q8, k8, v8, cu_q, cu_k, max_q, max_k, softmax_scale=0.05, out_dtype=torch.float16
        )
        assert out.dtype == torch.float16
        assert rel_l2(out, ref) < TOLERANCE


@hopper_only
def test_varlen_strided_inputs_give_the_same_output_in_place_where_they_can():
    q8, k8, v8, cu_q, cu_k, qd, kd, vd = make_packed([(50, 70), (90, 40)], 4, 4, 64, seed=22)
    kwargs = {"q_descale": qd, "k_descale": kd, "v_descale": vd, "causal": True}
    contiguous = sdpa_fp8.attention_varlen(q8, k8, v8, cu_q, cu_k, 90, 70, **kwargs)
    # The same Q as every other [rows, 2, H, D] slice, K as half of each
    # row's heads, V contiguous: K's and V's strides differ, so all three
    # are copied (Q and K: two copies).
    q_strided = torch.stack([q8.view(torch.uint8)] * 2, dim=1).view(E4M3)[:, 0]
    k_strided = torch.cat([k8.view(torch.uint8)] * 2, dim=1).view(E4M3)[:, :4]
    assert not q_strided.is_contiguous() and not k_strided.is_contiguous()
    call = lambda k, v: sdpa_fp8.attention_varlen(q_strided, k, v, cu_q, cu_k, 90, 70, **kwargs)  # noqa: E731
    out, copies = copies_made(lambda: call(k_strided, v8))
    assert copies == 2 and torch.equal(out, contiguous)
    # K and V as the halves of one fused [rows, 2, H, D] tensor: equal
    # strides, everything read in place.
    kv = torch.stack([k8.view(torch.uint8), v8.view(torch.uint8)], dim=1).view(E4M3)
    out, copies = copies_made(lambda: call(kv[:, 0], kv[:, 1]))
    assert copies == 0 and torch.equal(out, contiguous)


@hopper_only
def test_varlen_errors_on_the_gpu_are_python_exceptions():
    q8, k8, v8, cu_q, cu_k, _, _, _ = make_packed([(10, 10)], 2, 2, 64, seed=23)
    with pytest.raises(ValueError, match="cu_seqlens_q is on cpu"):
        sdpa_fp8.attention_varlen(q8, k8, v8, cu_q.cpu(), cu_k, 10, 10)
    with pytest.raises(TypeError, match="cu_seqlens_k must be torch.int32"):
        sdpa_fp8.attention_varlen(q8, k8, v8, cu_q, cu_k.long(), 10, 10)


@hopper_only
def test_opcheck_of_the_varlen_op():
    q8, k8, v8, cu_q, cu_k, qd, kd, vd = make_packed([(40, 60), (25, 25)], 4, 2, 64, seed=24)
    args = (q8, k8, v8, cu_q, cu_k, qd, kd, vd, 40, 60, 0.125, True, torch.bfloat16, True)
    before = [t.view(torch.uint8).clone() if t.dtype == E4M3 else t.clone() for t in args[:8]]
    torch.library.opcheck(torch.ops.sdpa_fp8.attention_varlen.default, args, test_utils=("test_faketensor",))
    after = [t.view(torch.uint8) if t.dtype == E4M3 else t for t in args[:8]]
    for b, a in zip(before, after, strict=True):
        assert torch.equal(b, a), "the op wrote one of its inputs"


@hopper_only
def test_torch_compile_traces_a_varlen_call():
    torch._dynamo.reset()
    q8, k8, v8, cu_q, cu_k, qd, kd, vd = make_packed([(200, 300), (64, 64)], 8, 2, 128, seed=25)

    def block(q, k, v, cu_q, cu_k):
        o, lse = sdpa_fp8.attention_varlen(
            q, k, v, cu_q, cu_k, 200, 300, q_descale=qd, k_descale=kd, v_descale=vd, causal=True, return_lse=True
        )
        return o.float().sum(dim=-1), lse

    compiled = torch.compile(block, fullgraph=True)
    (got, got_lse), (expected, expected_lse) = compiled(q8, k8, v8, cu_q, cu_k), block(q8, k8, v8, cu_q, cu_k)
    assert rel_l2(got, expected.double()) < TOLERANCE
    assert torch.equal(got_lse, expected_lse)


@hopper_only
def test_varlen_cuda_graph_capture_and_replay():
    seqs = [(120, 200), (7, 300), (256, 256)]
    q8, k8, v8, cu_q, cu_k, qd, kd, vd = make_packed(seqs, 8, 2, 64, seed=26)
    kwargs = {"q_descale": qd, "k_descale": kd, "v_descale": vd, "causal": True, "return_lse": True}
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        sdpa_fp8.attention_varlen(q8, k8, v8, cu_q, cu_k, 256, 300, **kwargs)  # the run before capture
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=stream):
        static_out, static_lse = sdpa_fp8.attention_varlen(q8, k8, v8, cu_q, cu_k, 256, 300, **kwargs)

    # New values into the captured buffers, other lengths of the same
    # totals and longest lengths into the prefix sums, then replay.
    n8, nk8, nv8, _, _, nqd, nkd, nvd = make_packed(seqs, 8, 2, 64, seed=27)
    for dst, src in ((q8, n8), (k8, nk8), (v8, nv8)):
        dst.view(torch.uint8).copy_(src.view(torch.uint8))
    for dst, src in ((qd, nqd), (kd, nkd), (vd, nvd)):
        dst.copy_(src)
    cu_q.copy_(torch.tensor([0, 7, 127, 383], dtype=torch.int32))
    cu_k.copy_(torch.tensor([0, 300, 456, 756], dtype=torch.int32))
    graph.replay()
    torch.cuda.synchronize()
    ref, ref_lse = packed_reference(q8, k8, v8, cu_q, cu_k, qd, kd, vd, scale=64**-0.5, causal=True)
    assert rel_l2(static_out, ref) < TOLERANCE
    seen = ref_lse.isfinite()
    assert (static_lse.double()[seen] - ref_lse[seen]).abs().max().item() < 1e-2


# (causal, window_size, softcap) over VARLEN_SEQS: rows of the (300, 100)
# sequence before 184 see no key under the first window.
VARLEN_SCORE_CASES = [(False, (32, 16), 0.0), (True, (100, -1), 3.0), (False, (-1, -1), 3.0)]


@hopper_only
@pytest.mark.parametrize(("causal", "window", "softcap"), VARLEN_SCORE_CASES)
@pytest.mark.parametrize(("hq", "hkv", "d"), [(8, 2, 64), (4, 4, 128)])
def test_varlen_a_window_and_a_softcap_match_a_float64_reference(
    hq, hkv, d, causal, window, softcap, poisoned_outputs
):
    q8, k8, v8, cu_q, cu_k, qd, kd, vd = make_packed(VARLEN_SEQS, hq, hkv, d, seed=44)
    max_q, max_k = max(sq for sq, _ in VARLEN_SEQS), max(sk for _, sk in VARLEN_SEQS)
    kwargs = {"q_descale": qd, "k_descale": kd, "v_descale": vd, "window_size": window, "softcap": softcap}
    out, lse = sdpa_fp8.attention_varlen(q8, k8, v8, cu_q, cu_k, max_q, max_k, **kwargs, causal=causal, return_lse=True)
    assert tuple(out.shape) == tuple(q8.shape) and tuple(lse.shape) == tuple(q8.shape[:2])
    inputs = (q8, k8, v8, cu_q, cu_k, qd, kd, vd)
    ref, ref_lse = packed_reference(*inputs, scale=d**-0.5, causal=causal, window=window, softcap=softcap)
    plain, _ = packed_reference(*inputs, scale=d**-0.5, causal=causal)
    assert_changed_by(ref, plain)
    assert not bool(out.isnan().any())
    assert rel_l2(out, ref) < TOLERANCE
    assert_lse_close(lse, ref_lse)
    assert_unseen_rows_are_empty(out, lse, ref_lse)


# attention_with_kvcache: decode against a cache, contiguous or paged.


def kvcache_reference(q8, k8, v8, qd, kd, vd, lens, *, causal):
    """float64 attention of each sequence's query rows over its first
    ``lens[b]`` keys, ``[B, Hq, Sq, D]``."""
    outs = []
    for b, n in enumerate(lens.tolist()):
        one = [t[b : b + 1] for t in (q8, k8[:, :n], v8[:, :n], qd, kd, vd)]
        outs.append(reference(*one[:3], *one[3:], scale=q8.shape[-1] ** -0.5, causal=causal, layout="bshd"))
    return torch.cat(outs)


def paged(cache: torch.Tensor, page_size: int, gen: torch.Generator):
    """``[B, Skv, Hkv, D]`` ``cache`` scattered over a pool of shuffled
    pages, with the table that names them: the same keys."""
    b, skv, hkv, d = cache.shape
    per_batch = skv // page_size
    order = torch.randperm(b * per_batch, generator=gen, device="cpu").to(cache.device)
    pool = torch.empty(b * per_batch, page_size, hkv, d, dtype=torch.uint8, device=cache.device)
    pool[order] = cache.view(torch.uint8).reshape(b * per_batch, page_size, hkv, d)
    return pool.view(E4M3), order.view(b, per_batch).to(torch.int32)


@hopper_only
@pytest.mark.parametrize(("sq", "causal"), [(1, False), (1, True), (4, True), (200, True)])  # 200: a prefill chunk
def test_kvcache_decode_matches_each_sequences_reference_contiguous_and_paged(poisoned_outputs, sq, causal):
    b, hq, hkv, skv, d = 3, 16, 4, 1024, 128
    q8, k8, v8, qd, kd, vd = make_inputs(b, hq, hkv, sq, skv, d, "bshd", seed=40 + sq)
    lens = torch.tensor([1024, 517, 64], dtype=torch.int32, device="cuda")
    kwargs = {"q_descale": qd, "k_descale": kd, "v_descale": vd, "causal": causal, "cache_seqlens": lens}
    out, lse = sdpa_fp8.attention_with_kvcache(q8, k8, v8, **kwargs, return_lse=True)
    assert tuple(out.shape) == (b, sq, hq, d) and tuple(lse.shape) == (b, sq, hq)
    ref = kvcache_reference(q8, k8, v8, qd, kd, vd, lens, causal=causal)
    assert not out.isnan().any() and rel_l2(out.transpose(1, 2), ref) < TOLERANCE
    pool_k, table = paged(k8, 64, torch.Generator().manual_seed(1))
    pool_v, _ = paged(v8, 64, torch.Generator().manual_seed(1))
    out_paged = sdpa_fp8.attention_with_kvcache(q8, pool_k, pool_v, page_table=table, **kwargs)
    assert same_bits(out_paged, out), "a paged cache gives the contiguous cache's bits"


@hopper_only
def test_kvcache_reads_the_halves_of_a_fused_kv_cache_in_place():
    b, hq, hkv, skv, d = 4, 32, 8, 2048, 128
    q8, k8, v8, qd, kd, vd = make_inputs(b, hq, hkv, 1, skv, d, "bshd", seed=50)
    lens = torch.tensor([2048, 1500, 1, 999], dtype=torch.int32, device="cuda")
    kwargs = {"q_descale": qd, "k_descale": kd, "v_descale": vd, "cache_seqlens": lens}
    expected = sdpa_fp8.attention_with_kvcache(q8, k8, v8, **kwargs)
    kv = torch.stack([k8.view(torch.uint8), v8.view(torch.uint8)], dim=2).view(E4M3)  # [B, Skv, 2, Hkv, D]
    sdpa_fp8.attention_with_kvcache(q8, kv[:, :, 0], kv[:, :, 1], **kwargs)
    out, copies = copies_made(lambda: sdpa_fp8.attention_with_kvcache(q8, kv[:, :, 0], kv[:, :, 1], **kwargs))
    assert copies == 0 and same_bits(out, expected)


# attention_with_kvcache's k and v: new keys appended at cache_seqlens.


def same_codes(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Whether two E4M3 (or uint8) tensors hold the same bytes."""
    return torch.equal(a.view(torch.uint8), b.view(torch.uint8))


def appended_by_indexing(cache: torch.Tensor, new: torch.Tensor, lens: torch.Tensor) -> torch.Tensor:
    """A copy of ``[B, Skv, Hkv, D]`` ``cache`` with sequence ``b``'s rows of
    ``new`` at positions ``lens[b] ..`` (inside the cache), written by plain
    indexing."""
    out = cache.view(torch.uint8).clone()
    for b, n in enumerate(lens.tolist()):
        out[b, n : n + new.shape[1]] = new[b].view(torch.uint8)
    return out.view(E4M3)


@hopper_only
@pytest.mark.parametrize(("s_new", "causal"), [(1, False), (1, True), (4, True)])
def test_kvcache_appends_new_keys_at_cache_seqlens_contiguous_and_paged(poisoned_outputs, s_new, causal):
    b, hq, hkv, skv, d = 4, 16, 4, 1024, 128
    q8, k8, v8, qd, kd, vd = make_inputs(b, hq, hkv, s_new, skv, d, "bshd", seed=60 + s_new)
    _, k_new, v_new, *_ = make_inputs(b, hq, hkv, 1, s_new, d, "bshd", seed=70 + s_new)
    # An empty sequence, the last key of a page of 64 (across its edge at
    # s_new = 4), a page's first key, up to the cache's end.
    lens = torch.tensor([0, 63, 64, skv - s_new], dtype=torch.int32, device="cuda")
    kwargs = {"q_descale": qd, "k_descale": kd, "v_descale": vd, "causal": causal}
    k_expected, v_expected = appended_by_indexing(k8, k_new, lens), appended_by_indexing(v8, v_new, lens)
    # What the call should give: attention over the caches appended by hand.
    expected, expected_lse = sdpa_fp8.attention_with_kvcache(
        q8, k_expected, v_expected, cache_seqlens=lens + s_new, **kwargs, return_lse=True
    )
    ref = kvcache_reference(q8, k_expected, v_expected, qd, kd, vd, lens + s_new, causal=causal)
    assert rel_l2(expected.transpose(1, 2), ref) < TOLERANCE

    k_cache, v_cache, lens_before = k8.clone(), v8.clone(), lens.clone()
    out, lse = sdpa_fp8.attention_with_kvcache(
        q8, k_cache, v_cache, k=k_new, v=v_new, cache_seqlens=lens, **kwargs, return_lse=True
    )
    assert torch.equal(lens, lens_before), "cache_seqlens is left as it was"
    assert same_codes(k_cache, k_expected) and same_codes(v_cache, v_expected), "new rows at cache_seqlens, only"
    assert not out.isnan().any() and same_bits(out, expected) and torch.equal(lse, expected_lse)

    # The same caches over shuffled pages of 64 keys, and the same pages
    # of the caches appended by hand.
    pool_k, table = paged(k8, 64, torch.Generator().manual_seed(2))
    pool_v, _ = paged(v8, 64, torch.Generator().manual_seed(2))
    pool_k_expected, _ = paged(k_expected, 64, torch.Generator().manual_seed(2))
    pool_v_expected, _ = paged(v_expected, 64, torch.Generator().manual_seed(2))
    expected_paged = sdpa_fp8.attention_with_kvcache(
        q8, pool_k_expected, pool_v_expected, page_table=table, cache_seqlens=lens + s_new, **kwargs
    )
    out_paged = sdpa_fp8.attention_with_kvcache(
        q8, pool_k, pool_v, k=k_new, v=v_new, page_table=table, cache_seqlens=lens, **kwargs
    )
    assert same_codes(pool_k, pool_k_expected) and same_codes(pool_v, pool_v_expected), "new rows in their pages, only"
    assert not out_paged.isnan().any() and same_bits(out_paged, expected_paged)
    assert rel_l2(out_paged.transpose(1, 2), ref) < TOLERANCE


@hopper_only
def test_kvcache_appends_into_the_halves_of_a_fused_kv_cache_in_place():
    b, hq, hkv, skv, d = 4, 32, 8, 2048, 128
    q8, k8, v8, qd, kd, vd = make_inputs(b, hq, hkv, 1, skv, d, "bshd", seed=80)
    _, k_new, v_new, *_ = make_inputs(b, hq, hkv, 1, 1, d, "bshd", seed=81)
    lens = torch.tensor([2047, 1500, 0, 999], dtype=torch.int32, device="cuda")
    kwargs = {"q_descale": qd, "k_descale": kd, "v_descale": vd}
    k_expected, v_expected = appended_by_indexing(k8, k_new, lens), appended_by_indexing(v8, v_new, lens)
    expected = sdpa_fp8.attention_with_kvcache(q8, k_expected, v_expected, cache_seqlens=lens + 1, **kwargs)
    kv = torch.stack([k8.view(torch.uint8), v8.view(torch.uint8)], dim=2).view(E4M3)  # [B, Skv, 2, Hkv, D]
    out = sdpa_fp8.attention_with_kvcache(q8, kv[:, :, 0], kv[:, :, 1], k=k_new, v=v_new, cache_seqlens=lens, **kwargs)
    assert same_codes(kv, torch.stack([k_expected.view(torch.uint8), v_expected.view(torch.uint8)], dim=2))
    assert same_bits(out, expected)


@hopper_only
@pytest.mark.parametrize("is_paged", [False, True])
def test_kvcache_new_keys_outside_the_cache_are_dropped_on_the_device(is_paged):
    from sdpa_fp8._api import _append_new_keys

    b, hq, hkv, skv, d, s_new = 4, 8, 2, 256, 64, 4
    q8, k8, v8, qd, kd, vd = make_inputs(b, hq, hkv, s_new, skv, d, "bshd", seed=90)
    _, k_new, v_new, *_ = make_inputs(b, hq, hkv, 1, s_new, d, "bshd", seed=91)
    # Two rows past the end, all past it, far past it, two before the start.
    lens = torch.tensor([254, 256, 1000, -2], dtype=torch.int32, device="cuda")
    kwargs = {"q_descale": qd, "k_descale": kd, "v_descale": vd, "causal": True}
    k_cache, v_cache, table = k8.clone(), v8.clone(), None
    if is_paged:
        k_cache, table = paged(k8, 64, torch.Generator().manual_seed(3))
        v_cache, _ = paged(v8, 64, torch.Generator().manual_seed(3))
        table[3, 0] = -7  # outside the pool: clamped to page 0 (no other write lands in its first rows)
    # The append on host copies (its index logic is tested against a loop
    # in test_api.py) is what the device's must leave.
    host = [t.view(torch.uint8).cpu().view(E4M3) for t in (k_cache, v_cache, k_new, v_new)]
    _append_new_keys(*host, lens.cpu(), None if table is None else table.cpu())
    k_expected, v_expected = (t.view(torch.uint8).cuda().view(E4M3) for t in host[:2])
    expected = sdpa_fp8.attention_with_kvcache(
        q8, k_expected, v_expected, page_table=table, cache_seqlens=lens + s_new, **kwargs
    )
    out = sdpa_fp8.attention_with_kvcache(
        q8, k_cache, v_cache, k=k_new, v=v_new, page_table=table, cache_seqlens=lens, **kwargs
    )
    torch.cuda.synchronize()  # a device-side assert would raise here
    assert same_codes(k_cache, k_expected) and same_codes(v_cache, v_expected)
    assert same_bits(out, expected)
