"""On a GPU: outputs against a float64 reference computed by torch on the
same (dequantized) inputs, both layouts, odd and unequal lengths, causal
masking, grouped-query attention, per-(batch, head) descales, streams,
``torch.compile`` and CUDA graphs. Skipped where torch sees no CUDA device."""

import subprocess
import sys

import pytest
import torch

import sdpa_fp8

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


def reference(q8, k8, v8, qd, kd, vd, *, scale, causal, layout):
    """float64 attention of the dequantized inputs, ``[B, Hq, Sq, D]``."""
    q, k, v = (bhsd(t, layout).double() for t in (q8, k8, v8))
    hq, hkv = q.shape[1], k.shape[1]
    group = hq // hkv
    q = q * qd.double().repeat_interleave(group, dim=1)[:, :, None, None]
    k = (k * kd.double()[:, :, None, None]).repeat_interleave(group, dim=1)
    v = (v * vd.double()[:, :, None, None]).repeat_interleave(group, dim=1)
    s = scale * q @ k.transpose(-1, -2)
    if causal:
        sq, skv = q.shape[2], k.shape[2]
        i = torch.arange(sq, device=s.device)[:, None]
        j = torch.arange(skv, device=s.device)[None, :]
        s = s.masked_fill(j > i + (skv - sq), float("-inf"))
    p = torch.softmax(s, dim=-1).nan_to_num(0.0)  # a row with no key: zeros
    return p @ v


def rel_l2(out: torch.Tensor, ref: torch.Tensor) -> float:
    return ((out.double() - ref).norm() / ref.norm().clamp(min=1e-30)).item()


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
    args = (q8, k8, v8, qd, kd, vd, 0.125, True, torch.bfloat16)
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
    the bshd layout's copies, made inside the capture at addresses no run
    has seen, get tensor maps of their own."""
    q8, k8, v8, qd, kd, vd = make_inputs(1, 4, 2, 200, 300, 64, "bshd", seed=9)
    kwargs = {"q_descale": qd, "k_descale": kd, "v_descale": vd, "causal": True}
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
