"""What runs without a GPU: the import, argument checks (in Python and in
the native module) before anything is launched, the fake implementation's
shapes, and ``quantize``."""

import importlib.util
import math
import re
from pathlib import Path

import pytest
import torch
from torch.utils.dlpack import to_dlpack

import sdpa_fp8
from sdpa_fp8 import _native

E4M3 = torch.float8_e4m3fn


def meta(*shape: int, dtype: torch.dtype = E4M3) -> torch.Tensor:
    return torch.empty(shape, device="meta", dtype=dtype)


def test_the_package_and_its_native_module_import():
    assert sdpa_fp8.__version__ == _native.__version__
    assert tuple(_native.HEAD_DIMS) == (64, 128)
    assert "2,8,256,64" in _native.RECORD_SHAPES
    assert torch.ops.sdpa_fp8.attention.default is not None


@pytest.mark.parametrize("layout", ["bshd", "bhsd"])
@pytest.mark.parametrize("out_dtype", [torch.bfloat16, torch.float16])
def test_the_fake_implementation_gives_the_output_shape_and_type(layout, out_dtype):
    # B=2, Hq=8, Hkv=2, Sq=100, Skv=300, D=64 in either layout.
    if layout == "bshd":
        q, k = meta(2, 100, 8, 64), meta(2, 300, 2, 64)
        expected = (2, 100, 8, 64)
    else:
        q, k = meta(2, 8, 100, 64), meta(2, 2, 300, 64)
        expected = (2, 8, 100, 64)
    o = sdpa_fp8.attention(q, k, k, causal=True, out_dtype=out_dtype, layout=layout)
    assert tuple(o.shape) == expected and o.is_contiguous()
    assert o.dtype == out_dtype
    assert o.device.type == "meta"
    # The log-sum-exp follows the output's rows: [B, Sq, Hq] or [B, Hq, Sq].
    o, lse = sdpa_fp8.attention(q, k, k, causal=True, out_dtype=out_dtype, layout=layout, return_lse=True)
    assert tuple(o.shape) == expected
    assert tuple(lse.shape) == expected[:3] and lse.is_contiguous() and lse.dtype == torch.float32


def test_strided_bshd_inputs_give_a_view_of_a_bhsd_result():
    # Contiguous [B, S, H, D] inputs go to the bshd op, whose output is
    # [B, Sq, Hq, D] contiguous; strided ones (here [B, H, S, D] memory
    # seen as [B, S, H, D]) are copied into [B, H, S, D] for the bhsd op,
    # whose result comes back transposed.
    q, k = meta(2, 8, 100, 64).transpose(1, 2), meta(2, 2, 300, 64).transpose(1, 2)
    o, lse = sdpa_fp8.attention(q, k, k, return_lse=True)
    assert tuple(o.shape) == (2, 100, 8, 64) and not o.is_contiguous()
    assert o.transpose(1, 2).is_contiguous()
    assert tuple(lse.shape) == (2, 100, 8) and lse.transpose(1, 2).is_contiguous()


def test_slices_of_a_fused_qkv_are_read_in_place_and_other_strides_copied():
    from sdpa_fp8._api import _in_place, _rows_in_place

    qkv = meta(2, 100, 3 * 8, 64).view(2, 100, 3, 8, 64)  # [B, S, 3, H, D]
    q, k, v = qkv[:, :, 0], qkv[:, :, 1], qkv[:, :, 2]
    assert all(_rows_in_place(t) for t in (q, k, v)) and _in_place(q, k, v)[1]
    # A decode-length Q is copied dense; K and V stay in place.
    q1 = qkv[:, :1, 0]
    assert _in_place(q1, k, v)[0].is_contiguous() and _in_place(q1, k, v)[1]
    # Batches not S rows apart, a strided last dimension, heads 72 elements
    # apart: copied. K and V of different strides: copied.
    assert not _rows_in_place(meta(2, 8, 100, 64).transpose(1, 2))
    assert not _rows_in_place(meta(2, 100, 8, 128)[..., ::2])
    assert not _rows_in_place(meta(2, 100, 8, 8 * 9).view(2, 100, 8, 9, 8)[:, :, :, 0])
    assert not _in_place(q, k, meta(2, 100, 8, 64))[1]


def test_the_op_traces_with_fake_tensors():
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode():
        q, k = torch.empty(1, 4, 33, 128, dtype=E4M3), torch.empty(1, 4, 65, 128, dtype=E4M3)
        s = torch.empty(1, 4)
        o, lse = torch.ops.sdpa_fp8.attention(q, k, k, s, s, s, 0.5, False, torch.bfloat16, True)
    assert tuple(o.shape) == (1, 4, 33, 128)
    assert o.dtype == torch.bfloat16
    assert tuple(lse.shape) == (1, 4, 33) and lse.dtype == torch.float32


def test_the_bshd_op_traces_with_fake_tensors():
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode():
        q, k = torch.empty(2, 33, 8, 128, dtype=E4M3), torch.empty(2, 65, 4, 128, dtype=E4M3)
        s = torch.empty(2, 4)
        o, lse = torch.ops.sdpa_fp8.attention_bshd(q, k, k, s, s, s, 0.5, True, torch.float16, True)
        _, empty = torch.ops.sdpa_fp8.attention_bshd(q, k, k, s, s, s, 0.5, True, torch.float16, False)
    assert tuple(o.shape) == (2, 33, 8, 128) and o.is_contiguous()
    assert o.dtype == torch.float16
    assert tuple(lse.shape) == (2, 33, 8) and lse.is_contiguous() and lse.dtype == torch.float32
    assert tuple(empty.shape) == (0,)


# The ops' last arguments: FlashAttention's window and softcap, off by
# default (the schema spells the ints SymInt, and the float 0 as 0.).
SCORES_SCHEMA = (
    r"(Sym)?[Ii]nt window_left=-1, (Sym)?[Ii]nt window_right=-1, float softcap=0(\.0?)?\) -> \(Tensor, Tensor\)$"
)


@pytest.mark.parametrize("op", ["attention", "attention_bshd"])
def test_the_op_schema_takes_fa3s_arguments(op):
    schema = str(getattr(torch.ops.sdpa_fp8, op).default._schema)
    assert schema.startswith(f"sdpa_fp8::{op}(Tensor q, Tensor k, Tensor v, Tensor q_descale")
    tail = r"float softmax_scale, bool causal, ScalarType out_dtype, bool return_lse, " + SCORES_SCHEMA
    assert re.search(tail, schema), schema


@pytest.mark.parametrize("layout", ["bshd", "bhsd"])
def test_a_window_and_a_softcap_keep_the_output_shapes(layout):
    if layout == "bshd":
        q, k = meta(2, 100, 8, 64), meta(2, 300, 2, 64)
    else:
        q, k = meta(2, 8, 100, 64), meta(2, 2, 300, 64)
    options = {"causal": True, "window_size": (128, 0), "softcap": 30.0, "layout": layout}
    o, lse = sdpa_fp8.attention(q, k, k, **options, return_lse=True)
    assert tuple(o.shape) == tuple(q.shape) and o.dtype == torch.bfloat16
    assert tuple(lse.shape) == tuple(q.shape[:3]) and lse.dtype == torch.float32


def test_the_ops_take_the_window_and_the_softcap_last():
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode():
        q, k = torch.empty(2, 33, 8, 128, dtype=E4M3), torch.empty(2, 65, 4, 128, dtype=E4M3)
        s = torch.empty(2, 4)
        o, lse = torch.ops.sdpa_fp8.attention_bshd(q, k, k, s, s, s, 0.5, True, torch.float16, True, 64, 0, 30.0)
        o_bhsd, _ = torch.ops.sdpa_fp8.attention(
            q, k, k, s, s, s, 0.5, False, torch.bfloat16, False, window_left=-1, window_right=16, softcap=5.0
        )
        packed, cu = torch.empty(40, 8, 128, dtype=E4M3), torch.empty(3, dtype=torch.int32)
        o_varlen, lse_varlen = torch.ops.sdpa_fp8.attention_varlen(
            packed, packed, packed, cu, cu, s, s, s, 20, 20, 0.5, False, torch.bfloat16, True, 8, 8, 1.0
        )
    assert tuple(o.shape) == (2, 33, 8, 128) and tuple(lse.shape) == (2, 33, 8)
    assert tuple(o_bhsd.shape) == (2, 33, 8, 128) and o_bhsd.dtype == torch.bfloat16
    assert tuple(o_varlen.shape) == (40, 8, 128) and tuple(lse_varlen.shape) == (40, 8)


def test_a_wrong_dtype_is_a_type_error():
    q = meta(1, 16, 2, 64)
    with pytest.raises(TypeError, match="k must be torch.float8_e4m3fn"):
        sdpa_fp8.attention(q, meta(1, 16, 2, 64, dtype=torch.bfloat16), q)
    with pytest.raises(TypeError, match="q_descale must be torch.float32"):
        sdpa_fp8.attention(q, q, q, q_descale=meta(1, 2, dtype=torch.float16))
    with pytest.raises(TypeError, match="v must be a torch.Tensor"):
        sdpa_fp8.attention(q, q, "v")


def test_host_tensors_are_refused():
    q = torch.zeros(1, 16, 2, 64, dtype=E4M3)
    with pytest.raises(ValueError, match="q must be a CUDA tensor, got one on cpu"):
        sdpa_fp8.attention(q, q, q)
    with pytest.raises(ValueError, match="k is on cpu, but q is on meta"):
        sdpa_fp8.attention(meta(1, 16, 2, 64), q, meta(1, 16, 2, 64))


@pytest.mark.parametrize(
    ("q", "k", "v", "message"),
    [
        ((1, 16, 4, 64), (1, 16, 2, 64), (1, 17, 2, 64), "k and v must have the same shape"),
        ((1, 16, 4, 64), (2, 16, 2, 64), (2, 16, 2, 64), "must agree on batch and head_dim"),
        ((1, 16, 4, 64), (1, 16, 2, 128), (1, 16, 2, 128), "must agree on batch and head_dim"),
        ((1, 16, 4, 96), (1, 16, 2, 96), (1, 16, 2, 96), "head_dim 96 is not supported"),
        ((1, 16, 6, 64), (1, 16, 4, 64), (1, 16, 4, 64), r"query heads \(6\) must be a multiple"),
        ((1, 0, 4, 64), (1, 16, 2, 64), (1, 16, 2, 64), "zero-sized dimension"),
        ((16, 4, 64), (1, 16, 2, 64), (1, 16, 2, 64), "q must have 4 dimensions"),
    ],
)
def test_mismatched_shapes_are_value_errors(q, k, v, message):
    with pytest.raises(ValueError, match=message):
        sdpa_fp8.attention(meta(*q), meta(*k), meta(*v))


def test_a_descale_of_the_wrong_shape_is_refused():
    q, k = meta(2, 16, 8, 64), meta(2, 16, 2, 64)
    # FA3's shape is (batch, num_heads_k) for all three, Q's included.
    with pytest.raises(ValueError, match=r"q_descale must have shape \(batch, num_heads_k\) = \(2, 2\), got \(2, 8\)"):
        sdpa_fp8.attention(q, k, k, q_descale=meta(2, 8, dtype=torch.float32))
    with pytest.raises(ValueError, match=r"v_descale must have shape .* got \(2,\)"):
        sdpa_fp8.attention(q, k, k, v_descale=meta(2, dtype=torch.float32))


def test_bad_options_are_refused():
    q = meta(1, 16, 2, 64)
    with pytest.raises(ValueError, match="layout must be one of"):
        sdpa_fp8.attention(q, q, q, layout="sbhd")
    with pytest.raises(ValueError, match="out_dtype must be"):
        sdpa_fp8.attention(q, q, q, out_dtype=torch.float32)
    for scale in (0.0, -1.0, math.inf, math.nan):
        with pytest.raises(ValueError, match="softmax_scale must be finite and positive"):
            sdpa_fp8.attention(q, q, q, softmax_scale=scale)


def native_capsules(q_shape, kv_shape, descale_shape, *, q_dtype=torch.uint8, out_dtype=torch.bfloat16):
    """DLPack capsules of host tensors, in the native call's argument order."""
    q = torch.zeros(q_shape, dtype=q_dtype)
    kv = torch.zeros(kv_shape, dtype=torch.uint8)
    s = torch.ones(descale_shape)
    out = torch.zeros(q_shape, dtype=out_dtype)
    return [to_dlpack(t) for t in (q, kv, kv, s, s, s, out)]


def test_the_native_module_checks_types_and_shapes_before_the_device():
    args = native_capsules((1, 4, 16, 64), (1, 2, 16, 64), (1, 2), q_dtype=torch.float16)
    with pytest.raises(TypeError, match=r"q must be float8_e4m3fn \(or its uint8 bits\)"):
        _native.attention(*args, None, 0.125, False, 0)
    args = native_capsules((1, 4, 16, 64), (1, 2, 16, 64), (1, 4))
    with pytest.raises(ValueError, match="q_descale must have shape"):
        _native.attention(*args, None, 0.125, False, 0)
    args = native_capsules((1, 4, 16, 64), (1, 2, 16, 64), (1, 2), out_dtype=torch.float32)
    with pytest.raises(TypeError, match="out must be float16 or bfloat16"):
        _native.attention(*args, None, 0.125, False, 0)
    args = native_capsules((1, 4, 16, 64), (1, 2, 16, 64), (1, 2))
    with pytest.raises(ValueError, match=r"q must be a CUDA tensor, got DLPack device type 1"):
        _native.attention(*args, None, 0.125, False, 0)


def test_the_native_bshd_call_checks_its_shapes_in_bshd_order_before_the_device():
    # B=1, Sq=16, Hq=4, Skv=16, Hkv=2, D=64 laid out [B, S, H, D].
    args = native_capsules((1, 16, 4, 64), (1, 16, 2, 64), (1, 16))
    with pytest.raises(ValueError, match=r"q_descale must have shape \(batch, num_heads_k\) = \[1, 2\], got \[1, 16\]"):
        _native.attention_bshd(*args, None, 0.125, False, 0)
    args = native_capsules((1, 16, 4, 64), (1, 16, 2, 64), (1, 2))
    args[6] = to_dlpack(torch.zeros(1, 4, 16, 64, dtype=torch.bfloat16))
    with pytest.raises(ValueError, match=r"out must have q's shape \[1, 16, 4, 64\], got \[1, 4, 16, 64\]"):
        _native.attention_bshd(*args, None, 0.125, False, 0)
    # Rows strided as a fused QKV's pass the layout checks (here they reach
    # the output's shape); a strided last dimension does not.
    args[0] = to_dlpack(torch.zeros(1, 4, 16, 64, dtype=torch.uint8).transpose(1, 2))
    with pytest.raises(ValueError, match=r"out must have q's shape"):
        _native.attention_bshd(*args, None, 0.125, False, 0)
    args[0] = to_dlpack(torch.zeros(1, 16, 4, 128, dtype=torch.uint8)[..., ::2])
    with pytest.raises(ValueError, match="q must be contiguous row-major.*last dimension contiguous"):
        _native.attention_bshd(*args, None, 0.125, False, 0)
    args = native_capsules((1, 16, 4, 64), (1, 16, 2, 64), (1, 2))
    fa3s = to_dlpack(torch.zeros(1, 4, 16))
    with pytest.raises(ValueError, match=r"lse must have shape \(batch, seqlen_q, num_heads\) = \[1, 16, 4\]"):
        _native.attention_bshd(*args, fa3s, 0.125, False, 0)
    with pytest.raises(ValueError, match=r"q must be a CUDA tensor, got DLPack device type 1"):
        _native.attention_bshd(*args, to_dlpack(torch.zeros(1, 16, 4)), 0.125, False, 0)


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the error where no CUDA driver is")
def test_without_a_driver_the_native_module_raises_a_runtime_error():
    try:
        import ctypes

        ctypes.CDLL("libcuda.so.1")
    except OSError:
        pass
    else:
        pytest.skip("libcuda is present (a driver without a usable GPU)")
    with pytest.raises(RuntimeError, match="no CUDA driver"):
        _native.recommended_variant([1, 8, 256, 64], [1, 8, 256, 64], False, "f16", 0, 0)


def test_the_native_module_refuses_strided_tensors_and_non_capsules():
    q = torch.zeros(1, 16, 4, 64, dtype=torch.uint8).transpose(1, 2)
    kv = torch.zeros(1, 2, 16, 64, dtype=torch.uint8)
    s, out = torch.ones(1, 2), torch.zeros(1, 4, 16, 64, dtype=torch.float16)
    args = [to_dlpack(t) for t in (q, kv, kv, s, s, s, out)]
    with pytest.raises(ValueError, match="q must be contiguous row-major"):
        _native.attention(*args, None, 0.125, False, 0)
    args[1] = kv
    with pytest.raises(TypeError, match="k: expected a DLPack capsule"):
        _native.attention(*args, None, 0.125, False, 0)


def test_the_native_module_reads_versioned_capsules_and_float8_codes():
    q = torch.zeros(1, 4, 16, 64, dtype=E4M3)
    kv = torch.zeros(1, 2, 16, 64, dtype=torch.uint8)
    s, out = torch.ones(1, 2), torch.zeros(1, 4, 16, 64, dtype=torch.float16)
    try:
        q_capsule = q.__dlpack__(max_version=(1, 0))
    except (TypeError, RuntimeError, BufferError) as e:  # a torch that exports no float8 or no DLPack 1.x
        pytest.skip(f"this torch does not export float8 through versioned DLPack: {e}")
    args = [q_capsule] + [t.__dlpack__(max_version=(1, 0)) for t in (kv, kv, s, s, s, out)]
    # Every check but the device's passes: the dtype code and layout were read.
    with pytest.raises(ValueError, match="q must be a CUDA tensor"):
        _native.attention(*args, None, 0.125, False, 0)


@pytest.mark.parametrize("layout", ["bshd", "bhsd"])
def test_quantize_round_trips_within_e4m3_precision(layout):
    torch.manual_seed(0)
    x = torch.randn(2, 37, 4, 64) * torch.tensor([0.01, 1.0, 30.0, 500.0])[:, None].repeat(1, 64)
    if layout == "bhsd":
        x = x.transpose(1, 2).contiguous()
    codes, descale = sdpa_fp8.quantize(x, layout=layout)
    assert codes.dtype == E4M3 and codes.shape == x.shape
    assert descale.dtype == torch.float32 and tuple(descale.shape) == (2, 4)
    per_head = descale[:, None, :, None] if layout == "bshd" else descale[:, :, None, None]
    back = codes.float() * per_head
    # E4M3 keeps 3 mantissa bits: a relative rounding error of at most 2^-4
    # on normal values; each head's largest magnitude lands on 448.
    err = (back - x).abs()
    assert bool((err <= x.abs() * 2**-4 + per_head * 2**-9).all())
    amax = codes.float().abs().amax(dim=(1, 3) if layout == "bshd" else (2, 3))
    assert torch.equal(amax, torch.full_like(amax, 448.0))


def test_quantize_groups_heads_for_a_query_descale():
    x = torch.randn(3, 20, 8, 128)
    _codes, descale = sdpa_fp8.quantize(x, num_heads_k=2)
    assert tuple(descale.shape) == (3, 2)
    expected = x.abs().amax(dim=(1, 3)).view(3, 2, 4).amax(dim=2) / 448
    torch.testing.assert_close(descale, expected)
    zeros, ones = sdpa_fp8.quantize(torch.zeros(1, 4, 2, 64))
    assert torch.equal(ones, torch.ones(1, 2)) and not bool(zeros.float().any())
    with pytest.raises(ValueError, match="num_heads_k"):
        sdpa_fp8.quantize(x, num_heads_k=3)
    with pytest.raises(TypeError, match="floating-point"):
        sdpa_fp8.quantize(x.to(torch.int32))


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_torch_compile_traces_the_call_as_one_graph(backend):
    # Meta tensors stand in for CUDA ones: dynamo traces the checks, the
    # layout copies and the custom op (through its fake) with no graph break.
    torch._dynamo.reset()

    def block(q, k, v, descale):
        return sdpa_fp8.attention(q, k, v, q_descale=descale, k_descale=descale, v_descale=descale, causal=True)

    compiled = torch.compile(block, fullgraph=True, backend=backend)
    o = compiled(meta(2, 100, 8, 64), meta(2, 300, 2, 64), meta(2, 300, 2, 64), meta(2, 2, dtype=torch.float32))
    assert tuple(o.shape) == (2, 100, 8, 64) and o.dtype == torch.bfloat16


def test_the_example_runs_or_says_it_needs_a_gpu(capsys):
    path = Path(__file__).parents[1] / "examples" / "attention.py"
    spec = importlib.util.spec_from_file_location("attention_example", path)
    assert spec is not None and spec.loader is not None
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    code = example.main()
    printed = capsys.readouterr()
    if torch.cuda.is_available():
        assert code == 0 and "relative L2 difference" in printed.out
    else:
        assert code == 1 and "needs a CUDA GPU" in printed.err


# attention_varlen: three sequences of 300 query and 500 key rows in all,
# Hq = 8, Hkv = 2, D = 64, as meta tensors.
def varlen_args(**overrides):
    args = {
        "q": meta(300, 8, 64),
        "k": meta(500, 2, 64),
        "v": meta(500, 2, 64),
        "cu_seqlens_q": meta(4, dtype=torch.int32),
        "cu_seqlens_k": meta(4, dtype=torch.int32),
        "max_seqlen_q": 200,
        "max_seqlen_k": 250,
    }
    return {**args, **overrides}


@pytest.mark.parametrize("out_dtype", [torch.bfloat16, torch.float16])
def test_the_varlen_fake_gives_the_output_and_log_sum_exp_shapes(out_dtype):
    o = sdpa_fp8.attention_varlen(**varlen_args(), causal=True, out_dtype=out_dtype)
    assert tuple(o.shape) == (300, 8, 64) and o.dtype == out_dtype and o.device.type == "meta"
    o, lse = sdpa_fp8.attention_varlen(**varlen_args(), return_lse=True)
    assert tuple(o.shape) == (300, 8, 64)
    assert tuple(lse.shape) == (300, 8) and lse.dtype == torch.float32


def test_the_varlen_op_schema_takes_fa3s_arguments():
    schema = str(torch.ops.sdpa_fp8.attention_varlen.default._schema)
    assert schema.startswith(
        "sdpa_fp8::attention_varlen(Tensor q, Tensor k, Tensor v, Tensor cu_seqlens_q, Tensor cu_seqlens_k"
    )
    assert re.search(r"bool return_lse, " + SCORES_SCHEMA, schema), schema


def test_the_varlen_fake_takes_a_window_and_a_softcap():
    o, lse = sdpa_fp8.attention_varlen(**varlen_args(), window_size=(-1, 16), softcap=50, return_lse=True)
    assert tuple(o.shape) == (300, 8, 64) and tuple(lse.shape) == (300, 8)


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        ({"window_size": (-2, 0)}, ValueError, r"window_size\[0\] must be -1 \(no limit\) or at least 0, got -2"),
        ({"window_size": (64, -5)}, ValueError, r"window_size\[1\] must be -1 \(no limit\) or at least 0, got -5"),
        ({"window_size": (64.0, 0)}, TypeError, r"window_size\[0\] must be an int, got float"),
        ({"window_size": (0, True)}, TypeError, r"window_size\[1\] must be an int, got bool"),
        ({"window_size": 64}, TypeError, r"window_size must be a \(left, right\) tuple of ints, got 64"),
        ({"window_size": (1, 2, 3)}, TypeError, r"window_size must be a \(left, right\) tuple of ints"),
        ({"softcap": -1.0}, ValueError, r"softcap must be finite and at least 0 \(0: no cap\), got -1.0"),
        ({"softcap": math.nan}, ValueError, "softcap must be finite and at least 0"),
        ({"softcap": math.inf}, ValueError, "softcap must be finite and at least 0"),
        ({"softcap": 1e6}, ValueError, r"softcap must be at most 65536.0, got 1000000.0"),
        ({"softcap": "30"}, TypeError, "softcap must be a float, got str"),
    ],
)
def test_bad_windows_and_softcaps_are_refused_before_anything_runs(options, error, message):
    q = meta(1, 16, 2, 64)
    with pytest.raises(error, match=message):
        sdpa_fp8.attention(q, q, q, **options)
    with pytest.raises(error, match=message):
        sdpa_fp8.attention_varlen(**varlen_args(), **options)
    with pytest.raises(error, match=message):
        sdpa_fp8.recommended_variant(q.shape, q.shape, **options)


def test_varlen_prefix_sums_must_be_int32_on_qs_device():
    with pytest.raises(TypeError, match="cu_seqlens_q must be torch.int32, got torch.int64"):
        sdpa_fp8.attention_varlen(**varlen_args(cu_seqlens_q=meta(4, dtype=torch.int64)))
    with pytest.raises(TypeError, match="cu_seqlens_k must be a torch.Tensor"):
        sdpa_fp8.attention_varlen(**varlen_args(cu_seqlens_k=[0, 100, 200, 300]))
    with pytest.raises(ValueError, match="cu_seqlens_k is on cpu, but q is on meta"):
        sdpa_fp8.attention_varlen(**varlen_args(cu_seqlens_k=torch.zeros(4, dtype=torch.int32)))


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"cu_seqlens_k": meta(5, dtype=torch.int32)}, r"must have the same length \(batch \+ 1\), got 4 and 5"),
        ({"cu_seqlens_q": meta(1, dtype=torch.int32)}, r"cu_seqlens_q must have shape \(batch \+ 1,\)"),
        ({"cu_seqlens_q": meta(2, 2, dtype=torch.int32)}, r"cu_seqlens_q must have shape \(batch \+ 1,\)"),
        ({"q": meta(1, 300, 8, 64)}, "q must have 3 dimensions"),
        ({"v": meta(499, 2, 64)}, "k and v must have the same shape"),
        ({"k": meta(500, 2, 128), "v": meta(500, 2, 128)}, "must agree on head_dim"),
        ({"k": meta(500, 3, 64), "v": meta(500, 3, 64)}, r"query heads \(8\) must be a multiple"),
        ({"q": meta(0, 8, 64)}, "zero-sized dimension"),
        ({"max_seqlen_q": 0}, "max_seqlen_q must be positive"),
    ],
)
def test_varlen_shapes_that_do_not_fit_are_value_errors(overrides, message):
    with pytest.raises(ValueError, match=message):
        sdpa_fp8.attention_varlen(**varlen_args(**overrides))


def test_varlen_descales_are_per_sequence_and_kv_head():
    with pytest.raises(ValueError, match=r"k_descale must have shape \(batch, num_heads_k\) = \(3, 2\), got \(1, 2\)"):
        sdpa_fp8.attention_varlen(**varlen_args(), k_descale=meta(1, 2, dtype=torch.float32))
    with pytest.raises(TypeError, match="max_seqlen_k must be an int, got float"):
        sdpa_fp8.attention_varlen(**varlen_args(max_seqlen_k=250.0))
    with pytest.raises(ValueError, match="softmax_scale must be finite and positive"):
        sdpa_fp8.attention_varlen(**varlen_args(), softmax_scale=-1.0)
    with pytest.raises(ValueError, match="out_dtype must be"):
        sdpa_fp8.attention_varlen(**varlen_args(), out_dtype=torch.float32)


def varlen_capsules(*, cu_dtype=torch.int32, lse_shape=(300, 8)):
    """DLPack capsules of host tensors, in the native varlen call's order."""
    q, kv = torch.zeros(300, 8, 64, dtype=torch.uint8), torch.zeros(500, 2, 64, dtype=torch.uint8)
    cu, s = torch.zeros(4, dtype=cu_dtype), torch.ones(3, 2)
    out, lse = torch.zeros(300, 8, 64, dtype=torch.bfloat16), torch.zeros(lse_shape)
    return [to_dlpack(t) for t in (q, kv, kv, cu, cu, s, s, s, out, lse)]


def test_the_native_varlen_call_checks_types_and_shapes_before_the_device():
    with pytest.raises(TypeError, match="cu_seqlens_q must be int32"):
        _native.attention_varlen(*varlen_capsules(cu_dtype=torch.int64), 200, 250, 0.125, False, 0)
    with pytest.raises(ValueError, match=r"lse must have shape \(total_q, num_heads\)"):
        _native.attention_varlen(*varlen_capsules(lse_shape=(8, 300)), 200, 250, 0.125, False, 0)
    with pytest.raises(ValueError, match="q must be a CUDA tensor, got DLPack device type 1"):
        _native.attention_varlen(*varlen_capsules(), 200, 250, 0.125, False, 0)
    without_lse = varlen_capsules()[:9] + [None]
    with pytest.raises(ValueError, match="q must be a CUDA tensor"):
        _native.attention_varlen(*without_lse, 200, 250, 0.125, False, 0)


def test_the_native_calls_check_the_window_and_the_softcap_first():
    args = native_capsules((1, 4, 16, 64), (1, 2, 16, 64), (1, 2))
    with pytest.raises(ValueError, match=r"window_size\[0\] must be -1 \(no limit\) or at least 0, got -2"):
        _native.attention(*args, None, 0.125, False, 0, window_size=(-2, 0))
    with pytest.raises(ValueError, match=r"softcap must be finite and at least 0 \(0: no cap\), got NaN"):
        _native.attention_bshd(*args, None, 0.125, False, 0, softcap=math.nan)
    with pytest.raises(ValueError, match=r"window_size\[1\] must be -1 \(no limit\) or at least 0, got -3"):
        _native.attention_varlen(*varlen_capsules(), 200, 250, 0.125, False, 0, window_size=(0, -3))
    # Valid ones pass on to the tensors' checks; they are keyword-only.
    with pytest.raises(ValueError, match="q must be a CUDA tensor"):
        _native.attention(*args, None, 0.125, False, 0, window_size=(128, 0), softcap=30.0)
    with pytest.raises(TypeError):
        _native.attention(*args, None, 0.125, False, 0, (128, 0))
    assert _native.MAX_SOFTCAP == 65536.0


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_torch_compile_traces_a_call_with_a_window_and_a_softcap(backend):
    torch._dynamo.reset()

    def block(q, k, v):
        return sdpa_fp8.attention(q, k, v, causal=True, window_size=(256, 0), softcap=30.0, return_lse=True)

    compiled = torch.compile(block, fullgraph=True, backend=backend)
    o, lse = compiled(meta(2, 100, 8, 64), meta(2, 300, 2, 64), meta(2, 300, 2, 64))
    assert tuple(o.shape) == (2, 100, 8, 64) and tuple(lse.shape) == (2, 100, 8)


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_torch_compile_traces_a_varlen_call_as_one_graph(backend):
    torch._dynamo.reset()

    def block(q, k, v, cu_q, cu_k, descale):
        o, lse = sdpa_fp8.attention_varlen(
            q, k, v, cu_q, cu_k, 200, 250, q_descale=descale, k_descale=descale, v_descale=descale, return_lse=True
        )
        return o, lse

    compiled = torch.compile(block, fullgraph=True, backend=backend)
    a = varlen_args()
    o, lse = compiled(a["q"], a["k"], a["v"], a["cu_seqlens_q"], a["cu_seqlens_k"], meta(3, 2, dtype=torch.float32))
    assert tuple(o.shape) == (300, 8, 64) and o.dtype == torch.bfloat16
    assert tuple(lse.shape) == (300, 8)


def test_the_kvcache_call_gives_the_output_and_log_sum_exp_shapes():
    q1, q4 = meta(2, 1, 8, 128), meta(2, 4, 8, 128)
    cache = meta(2, 256, 2, 128)
    lens = torch.empty(2, dtype=torch.int32, device="meta")
    o, lse = sdpa_fp8.attention_with_kvcache(q1, cache, cache, cache_seqlens=lens, return_lse=True)
    assert tuple(o.shape) == (2, 1, 8, 128) and o.dtype == torch.bfloat16
    assert tuple(lse.shape) == (2, 1, 8) and lse.dtype == torch.float32
    # Several query rows: a contiguous cache is read as pages, or a paged one.
    o = sdpa_fp8.attention_with_kvcache(q4, cache, cache, causal=True, out_dtype=torch.float16)
    assert tuple(o.shape) == (2, 4, 8, 128) and o.dtype == torch.float16
    pool, table = meta(10, 64, 2, 128), torch.empty(2, 5, dtype=torch.int32, device="meta")
    o = sdpa_fp8.attention_with_kvcache(q4, pool, pool, page_table=table, cache_seqlens=lens)
    assert tuple(o.shape) == (2, 4, 8, 128)
    # A prefill chunk over the cached prefix: any number of query rows.
    chunk = meta(2, 100, 8, 128)
    o = sdpa_fp8.attention_with_kvcache(chunk, pool, pool, page_table=table, cache_seqlens=lens, causal=True)
    assert tuple(o.shape) == (2, 100, 8, 128)
    schema = str(torch.ops.sdpa_fp8.attention_kvcache.default._schema)
    assert "Tensor? cache_seqlens, Tensor? page_table" in schema, schema


@pytest.mark.parametrize(
    ("q", "cache", "options", "error", "message"),
    [
        ((2, 0, 8, 64), (2, 256, 2, 64), {}, ValueError, "at least one query row"),
        ((2, 4, 8, 64), (2, 100, 2, 64), {}, ValueError, "needs a page_table"),
        ((2, 1, 8, 64), (2, 100, 2, 64), {"cache_seqlens": torch.empty(2, device="meta")}, TypeError, "int32"),
        ((2, 1, 8, 64), (2, 100, 2, 64), {"page_table": torch.empty(2, dtype=torch.int32, device="meta")}, ValueError, "2 dimension"),
    ],
)
def test_kvcache_arguments_are_checked_before_anything_runs(q, cache, options, error, message):
    with pytest.raises(error, match=message):
        sdpa_fp8.attention_with_kvcache(meta(*q), meta(*cache), meta(*cache), **options)


# attention_with_kvcache's k and v (FlashAttention-3's new keys): two rows
# for each of two sequences, Hq = 8, Hkv = 2, D = 64, into a [2, 256, 2,
# 64] cache, as meta tensors.
def append_args(**overrides):
    args = {
        "q": meta(2, 2, 8, 64),
        "k_cache": meta(2, 256, 2, 64),
        "v_cache": meta(2, 256, 2, 64),
        "k": meta(2, 2, 2, 64),
        "v": meta(2, 2, 2, 64),
        "cache_seqlens": meta(2, dtype=torch.int32),
    }
    return {**args, **overrides}


def test_appending_keys_keeps_the_output_shapes():
    o, lse = sdpa_fp8.attention_with_kvcache(**append_args(), causal=True, return_lse=True)
    assert tuple(o.shape) == (2, 2, 8, 64) and tuple(lse.shape) == (2, 2, 8)
    pool, table = meta(10, 64, 2, 64), meta(2, 5, dtype=torch.int32)
    o = sdpa_fp8.attention_with_kvcache(**append_args(k_cache=pool, v_cache=pool, page_table=table))
    assert tuple(o.shape) == (2, 2, 8, 64)
    kv = meta(2, 256, 2, 2, 64)  # the halves of a fused cache, one query row
    one = {"q": meta(2, 1, 8, 64), "k": meta(2, 1, 2, 64), "v": meta(2, 1, 2, 64)}
    o = sdpa_fp8.attention_with_kvcache(**append_args(k_cache=kv[:, :, 0], v_cache=kv[:, :, 1], **one))
    assert tuple(o.shape) == (2, 1, 8, 64)


PAGED = {"k_cache": meta(10, 64, 2, 64), "v_cache": meta(10, 64, 2, 64), "page_table": meta(2, 3, dtype=torch.int32)}


@pytest.mark.parametrize(
    ("overrides", "error", "message"),
    [
        ({"v": None}, ValueError, r"k and v must be given together \(new keys and their values\), got k without v"),
        ({"k": None}, ValueError, "k and v must be given together .* got v without k"),
        ({"cache_seqlens": None}, ValueError, r"appending k and v needs cache_seqlens \(each sequence's length before"),
        ({"k": meta(2, 2, 2, 64, dtype=torch.bfloat16)}, TypeError, "k must be torch.float8_e4m3fn"),
        ({"v": "v"}, TypeError, "v must be a torch.Tensor, got str"),
        ({"k": meta(2, 2, 64)}, ValueError, r"k must have 4 dimensions \(batch, seq, heads, head_dim\)"),
        ({"v": meta(2, 3, 2, 64)}, ValueError, r"k and v must have the same shape, got \(2, 2, 2, 64\) and \(2, 3, 2"),
        (
            {"k": meta(1, 2, 2, 64), "v": meta(1, 2, 2, 64)},
            ValueError,
            r"k must have shape \(batch, seqlen_new, num_heads_k, head_dim\) = \(2, seqlen_new, 2, 64\) as q",
        ),
        ({"k": meta(2, 2, 4, 64), "v": meta(2, 2, 4, 64)}, ValueError, r"k must have shape .* got \(2, 2, 4, 64\)"),
        ({"k": meta(2, 2, 2, 128), "v": meta(2, 2, 2, 128)}, ValueError, r"k must have shape .* got \(2, 2, 2, 128\)"),
        ({"k": meta(2, 0, 2, 64), "v": meta(2, 0, 2, 64)}, ValueError, r"zero-sized dimension: k \(2, 0, 2, 64\)"),
        (
            {"k": meta(2, 257, 2, 64), "v": meta(2, 257, 2, 64)},
            ValueError,
            r"k has 257 rows per sequence, more than the cache holds \(256\)",
        ),
        (
            {**PAGED, "k": meta(2, 193, 2, 64), "v": meta(2, 193, 2, 64)},
            ValueError,
            r"k has 193 rows per sequence, more than the cache holds \(192\)",
        ),
        (
            {"k": torch.zeros(2, 2, 2, 64, dtype=E4M3), "v": torch.zeros(2, 2, 2, 64, dtype=E4M3)},
            ValueError,
            "k is on cpu, but q is on meta",
        ),
        (
            {"cache_seqlens": meta(3, dtype=torch.int32)},
            ValueError,
            r"cache_seqlens must have shape \(batch,\) = \(2,\), got \(3,\)",
        ),
        (
            {"k_cache": meta(3, 256, 2, 64), "v_cache": meta(3, 256, 2, 64)},
            ValueError,
            r"k_cache must have q's batch 2, got shape \(3, 256, 2, 64\)",
        ),
        (
            {**PAGED, "page_table": meta(3, 3, dtype=torch.int32)},
            ValueError,
            r"page_table must have shape \(batch, max_pages\) with batch 2, got \(3, 3\)",
        ),
        (
            {**PAGED, "k_cache": meta(0, 64, 2, 64), "v_cache": meta(0, 64, 2, 64)},
            ValueError,
            r"k_cache has no pages to append to, got shape \(0, 64, 2, 64\)",
        ),
    ],
)
def test_new_keys_are_checked_before_anything_runs(overrides, error, message):
    with pytest.raises(error, match=message):
        sdpa_fp8.attention_with_kvcache(**append_args(**overrides))


def test_nothing_is_appended_before_every_argument_is_checked(monkeypatch):
    from sdpa_fp8 import _api

    appended = []

    def append(k_cache, v_cache, k, v, cache_seqlens, page_table):
        """Records the call instead of writing (meta tensors hold no bytes)."""
        appended.append(k)
        return cache_seqlens

    monkeypatch.setattr(_api, "_append_new_keys", append)
    with pytest.raises(ValueError, match=r"v_descale must have shape \(batch, num_heads_k\)"):
        sdpa_fp8.attention_with_kvcache(**append_args(), v_descale=meta(2, 8, dtype=torch.float32))
    with pytest.raises(ValueError, match="softcap must be finite"):
        sdpa_fp8.attention_with_kvcache(**append_args(), softcap=-1.0)
    # Two query rows read a contiguous cache as pages: 100 rows cannot be.
    with pytest.raises(ValueError, match="needs a page_table"):
        sdpa_fp8.attention_with_kvcache(**append_args(k_cache=meta(2, 100, 2, 64), v_cache=meta(2, 100, 2, 64)))
    assert not appended
    sdpa_fp8.attention_with_kvcache(**append_args())
    assert len(appended) == 1


def random_codes(*shape: int, seed: int) -> torch.Tensor:
    """E4M3 tensor of random bytes on the host (NaN codes included: the
    append moves bytes)."""
    gen = torch.Generator().manual_seed(seed)
    return torch.randint(0, 256, shape, generator=gen, dtype=torch.uint8).view(E4M3)


def appended_by_loop(cache, new, lens, page_table=None):
    """The bytes ``cache`` should hold after appending ``new``, one row at
    a time: new row ``i`` of sequence ``b`` at position ``lens[b] + i`` where
    that lies inside the cache (a page-table entry outside the pool clamped
    into it), dropped elsewhere."""
    out = cache.view(torch.uint8).clone()
    rows = new.view(torch.uint8)
    for b, start in enumerate(lens.tolist()):
        for i in range(new.shape[1]):
            p = start + i
            if page_table is None:
                if 0 <= p < cache.shape[1]:
                    out[b, p] = rows[b, i]
            elif 0 <= p < page_table.shape[1] * cache.shape[1]:
                page = min(max(int(page_table[b, p // cache.shape[1]]), 0), cache.shape[0] - 1)
                out[page, p % cache.shape[1]] = rows[b, i]
    return out


@pytest.mark.parametrize(
    ("s_new", "lens"),
    [
        (1, [0, 3, 7]),
        (3, [0, 3, 5]),
        # Past the end (rows dropped, or all of them) and before the start.
        (3, [6, 8, 100]),
        (3, [-2, -5, 7]),
    ],
)
def test_appending_writes_each_new_row_at_its_position_and_nothing_else(s_new, lens):
    from sdpa_fp8._api import _append_new_keys

    # A contiguous cache [3, 8, 2, 16] and the halves of a fused one.
    k_cache, v_cache = random_codes(3, 8, 2, 16, seed=0), random_codes(3, 8, 2, 16, seed=1)
    kv = random_codes(3, 8, 2, 2, 16, seed=2)
    k, v = random_codes(3, s_new, 2, 16, seed=3), random_codes(3, s_new, 2, 16, seed=4)
    lens = torch.tensor(lens, dtype=torch.int32)
    before = lens.clone()
    expected_k, expected_v = appended_by_loop(k_cache, k, lens), appended_by_loop(v_cache, v, lens)
    expected_kv = torch.stack([appended_by_loop(kv[:, :, i], new, lens) for i, new in enumerate((k, v))], dim=2)
    after = _append_new_keys(k_cache, v_cache, k, v, lens, None)
    assert torch.equal(k_cache.view(torch.uint8), expected_k) and torch.equal(v_cache.view(torch.uint8), expected_v)
    assert torch.equal(after, before + s_new) and torch.equal(lens, before)
    _append_new_keys(kv[:, :, 0], kv[:, :, 1], k, v, lens, None)
    assert torch.equal(kv.view(torch.uint8), expected_kv), "the halves of a fused cache are written in place"


@pytest.mark.parametrize(
    "lens",
    [
        # Across a page edge, at a page's start, before the start (table
        # entries 9 and -1 lie outside the pool: clamped to pages 6 and 0).
        [3, 7, -1],
        # Up to the capacity (12) and past it, from the start.
        [10, 12, 0],
    ],
)
def test_appending_to_a_paged_cache_writes_the_pages_the_table_names(lens):
    from sdpa_fp8._api import _append_new_keys

    # 7 pages of 4 keys; sequences of up to 3 pages.
    k_pool, v_pool = random_codes(7, 4, 2, 16, seed=5), random_codes(7, 4, 2, 16, seed=6)
    table = torch.tensor([[2, 5, 1], [3, 4, 9], [-1, 6, 0]], dtype=torch.int32)
    k, v = random_codes(3, 3, 2, 16, seed=7), random_codes(3, 3, 2, 16, seed=8)
    lens = torch.tensor(lens, dtype=torch.int32)
    expected_k, expected_v = appended_by_loop(k_pool, k, lens, table), appended_by_loop(v_pool, v, lens, table)
    after = _append_new_keys(k_pool, v_pool, k, v, lens, table)
    assert torch.equal(k_pool.view(torch.uint8), expected_k) and torch.equal(v_pool.view(torch.uint8), expected_v)
    assert torch.equal(after, lens + 3)


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_torch_compile_traces_a_kvcache_call_that_appends(backend):
    from sdpa_fp8._api import _append_new_keys

    torch._dynamo.reset()

    def block(q, k_cache, v_cache, k, v, lens):
        return sdpa_fp8.attention_with_kvcache(q, k_cache, v_cache, k=k, v=v, cache_seqlens=lens, return_lse=True)

    o, lse = torch.compile(block, fullgraph=True, backend=backend)(*append_args().values())
    assert tuple(o.shape) == (2, 2, 8, 64) and tuple(lse.shape) == (2, 2, 8)
    # On host tensors the compiled append writes the caller's strided cache.
    kv, new = random_codes(2, 8, 2, 2, 16, seed=9), random_codes(2, 2, 2, 16, seed=10)
    lens = torch.tensor([1, 6], dtype=torch.int32)
    expected = torch.stack([appended_by_loop(kv[:, :, i], new, lens) for i in range(2)], dim=2)
    torch.compile(_append_new_keys, fullgraph=True, backend=backend)(kv[:, :, 0], kv[:, :, 1], new, new, lens, None)
    assert torch.equal(kv.view(torch.uint8), expected)
