"""The custom op ``torch.ops.sdpa_fp8.attention``: the native launch on the
current CUDA stream, and its fake implementation for tracing.

The op takes the kernels' own layout, ``[batch, heads, seq, head_dim]``
contiguous, and float32 descales ``(batch, num_heads_k)`` contiguous; the
public ``sdpa_fp8.attention`` checks its arguments and brings them into
that form.
"""

import torch
from torch.utils.dlpack import to_dlpack

from . import _native

E4M3 = torch.float8_e4m3fn


def _capsule(t: torch.Tensor) -> object:
    """A DLPack capsule of ``t``, E4M3 tensors as their uint8 bits (a view,
    no copy): every torch that has DLPack exports uint8, not all float8."""
    return to_dlpack(t.view(torch.uint8) if t.dtype == E4M3 else t)


def _stride_tags() -> tuple[torch.Tag, ...]:
    """The strongest stride tag this torch has: under ``torch.compile``,
    inductor then hands the op its inputs contiguous, as the kernels read
    them (and as the traced call made them)."""
    for name in ("needs_contiguous_strides", "needs_exact_strides", "needs_fixed_stride_order"):
        tag = getattr(torch.Tag, name, None)
        if tag is not None:
            return (tag,)
    return ()


@torch.library.custom_op("sdpa_fp8::attention", mutates_args=(), device_types="cuda", tags=_stride_tags())
def attention_op(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    q_descale: torch.Tensor,
    k_descale: torch.Tensor,
    v_descale: torch.Tensor,
    softmax_scale: float,
    causal: bool,
    out_dtype: torch.dtype,
) -> torch.Tensor:
    """O = softmax(softmax_scale * Q K^T [+ causal mask]) V on ``[B, H, S, D]``
    contiguous E4M3 inputs, launched on the current stream of q's device."""
    out = q.new_empty(q.shape, dtype=out_dtype)
    stream = torch.cuda.current_stream(q.device).cuda_stream
    _native.attention(
        _capsule(q),
        _capsule(k),
        _capsule(v),
        _capsule(q_descale),
        _capsule(k_descale),
        _capsule(v_descale),
        _capsule(out),
        softmax_scale,
        causal,
        stream,
    )
    return out


@attention_op.register_fake
def _attention_fake(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    q_descale: torch.Tensor,
    k_descale: torch.Tensor,
    v_descale: torch.Tensor,
    softmax_scale: float,
    causal: bool,
    out_dtype: torch.dtype,
) -> torch.Tensor:
    """The output's shape, type and device, without running anything."""
    return q.new_empty(q.shape, dtype=out_dtype)
