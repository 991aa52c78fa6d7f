"""The custom ops ``torch.ops.sdpa_fp8.attention``,
``torch.ops.sdpa_fp8.attention_bshd``,
``torch.ops.sdpa_fp8.attention_varlen`` and
``torch.ops.sdpa_fp8.attention_kvcache``: the native launches on the current
CUDA stream, and their fake implementations for tracing.

``attention`` takes ``[batch, heads, seq, head_dim]`` contiguous tensors,
``attention_bshd`` ``[batch, seq, heads, head_dim]`` ones, contiguous or
with strided rows as ``sdpa_fp8.attention`` describes (read in place where
the library can, copied otherwise; its outputs are always ``[batch, seq,
heads, head_dim]`` and ``[batch, seq, heads]`` contiguous),
``attention_varlen`` packed ``[total_rows, heads, head_dim]``, contiguous
or with strided rows, ``attention_kvcache`` Q ``[batch, heads, seq,
head_dim]`` and a ``[batch, seq, heads, head_dim]`` or paged cache,
all float32 descales ``(batch, num_heads_k)`` contiguous; each returns O
and the log-sum-exp of its rows (an empty tensor unless ``return_lse``).
Their last arguments, with defaults that leave them off, are
FlashAttention's sliding window (``window_left``, ``window_right``: -1 for
no limit) and ``softcap`` (0 for none).
The public ``sdpa_fp8.attention`` and
``sdpa_fp8.attention_varlen`` check their arguments and bring them into
that form.
"""

from collections.abc import Callable
from typing import NamedTuple

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


def _outputs(q: torch.Tensor, out_dtype: torch.dtype, return_lse: bool) -> tuple[torch.Tensor, torch.Tensor]:
    """A call's outputs, uninitialized: O of q's shape and the log-sum-exp
    of its rows (q's shape without ``head_dim``) float32, ``[0]`` unless
    asked for."""
    lse_shape = q.shape[:-1] if return_lse else (0,)
    return q.new_empty(q.shape, dtype=out_dtype), q.new_empty(lse_shape, dtype=torch.float32)


class _Scores(NamedTuple):
    """A call's sliding window and score cap, as the ops take them."""

    window_left: int
    window_right: int
    softcap: float

    def native(self) -> dict[str, object]:
        """The native calls' keyword arguments."""
        return {"window_size": (self.window_left, self.window_right), "softcap": self.softcap}


def _launch(
    native: Callable[..., bool | None],
    tensors: tuple[torch.Tensor, ...],
    lse: torch.Tensor | None,
    softmax_scale: float,
    causal: bool,
    scores: _Scores,
) -> bool | None:
    """``native`` (``_native.attention`` or ``_native.attention_bshd``) on
    Q, K, V, the three descales, the output and the log-sum-exp (where not
    ``None``), on the current stream of q's device; what it returns
    (``attention_bshd``: whether it launched)."""
    stream = torch.cuda.current_stream(tensors[0].device).cuda_stream
    lse_capsule = None if lse is None else _capsule(lse)
    return native(*(_capsule(t) for t in tensors), lse_capsule, softmax_scale, causal, stream, **scores.native())


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
    return_lse: bool,
    window_left: int = -1,
    window_right: int = -1,
    softcap: float = 0.0,
) -> tuple[torch.Tensor, torch.Tensor]:
    """O = softmax(softmax_scale * Q K^T [+ mask]) V on ``[B, H, S, D]``
    contiguous E4M3 inputs (the mask causal, a sliding window, or both; the
    scores capped where ``softcap`` is not 0) and the log-sum-exp ``[B, Hq,
    Sq]`` float32 (an empty ``[0]`` tensor, not written, unless
    ``return_lse``), launched on the current stream of q's device."""
    out, lse = _outputs(q, out_dtype, return_lse)
    tensors = (q, k, v, q_descale, k_descale, v_descale, out)
    scores = _Scores(window_left, window_right, softcap)
    _launch(_native.attention, tensors, lse if return_lse else None, softmax_scale, causal, scores)
    return out, lse


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
    return_lse: bool,
    window_left: int = -1,
    window_right: int = -1,
    softcap: float = 0.0,
) -> tuple[torch.Tensor, torch.Tensor]:
    """The outputs' shapes, types and device, without running anything."""
    return _outputs(q, out_dtype, return_lse)


@torch.library.custom_op("sdpa_fp8::attention_bshd", mutates_args=(), device_types="cuda", tags=_stride_tags())
def attention_bshd_op(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    q_descale: torch.Tensor,
    k_descale: torch.Tensor,
    v_descale: torch.Tensor,
    softmax_scale: float,
    causal: bool,
    out_dtype: torch.dtype,
    return_lse: bool,
    window_left: int = -1,
    window_right: int = -1,
    softcap: float = 0.0,
) -> tuple[torch.Tensor, torch.Tensor]:
    """``attention`` on ``[B, S, H, D]`` E4M3 inputs (contiguous, or rows
    strided as the kernels read them) into a
    ``[B, Sq, Hq, D]`` contiguous output and a ``[B, Sq, Hq]`` log-sum-exp.
    The library reads and writes them in place where the kernel variant it
    recommends for the problem can (the ``wgmma`` variants, on Hopper);
    otherwise the inputs are copied into ``[B, H, S, D]`` and the results
    back."""
    out, lse = _outputs(q, out_dtype, return_lse)
    tensors = (q, k, v, q_descale, k_descale, v_descale, out)
    scores = _Scores(window_left, window_right, softcap)
    if not _launch(_native.attention_bshd, tensors, lse if return_lse else None, softmax_scale, causal, scores):
        q, k, v = (t.transpose(1, 2).view(torch.uint8).contiguous() for t in (q, k, v))
        out_bhsd, lse_bhsd = _outputs(q, out_dtype, return_lse)
        tensors = (q, k, v, q_descale, k_descale, v_descale, out_bhsd)
        _launch(_native.attention, tensors, lse_bhsd if return_lse else None, softmax_scale, causal, scores)
        out.copy_(out_bhsd.transpose(1, 2))
        if return_lse:
            lse.copy_(lse_bhsd.transpose(1, 2))
    return out, lse


@attention_bshd_op.register_fake
def _attention_bshd_fake(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    q_descale: torch.Tensor,
    k_descale: torch.Tensor,
    v_descale: torch.Tensor,
    softmax_scale: float,
    causal: bool,
    out_dtype: torch.dtype,
    return_lse: bool,
    window_left: int = -1,
    window_right: int = -1,
    softcap: float = 0.0,
) -> tuple[torch.Tensor, torch.Tensor]:
    """The outputs' shapes, types and device, without running anything."""
    return _outputs(q, out_dtype, return_lse)


@torch.library.custom_op("sdpa_fp8::attention_varlen", mutates_args=(), device_types="cuda", tags=_stride_tags())
def attention_varlen_op(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    cu_seqlens_q: torch.Tensor,
    cu_seqlens_k: torch.Tensor,
    q_descale: torch.Tensor,
    k_descale: torch.Tensor,
    v_descale: torch.Tensor,
    max_seqlen_q: int,
    max_seqlen_k: int,
    softmax_scale: float,
    causal: bool,
    out_dtype: torch.dtype,
    return_lse: bool,
    window_left: int = -1,
    window_right: int = -1,
    softcap: float = 0.0,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Attention over a packed batch: Q ``[total_q, Hq, D]``, K and V
    ``[total_k, Hkv, D]`` contiguous E4M3, int32 prefix sums ``[B + 1]``;
    returns O ``[total_q, Hq, D]`` and the log-sum-exp ``[total_q, Hq]``
    float32 (an empty ``[0]`` tensor, not written, unless ``return_lse``),
    launched on the current stream of q's device."""
    out, lse = _outputs(q, out_dtype, return_lse)
    stream = torch.cuda.current_stream(q.device).cuda_stream
    _native.attention_varlen(
        _capsule(q),
        _capsule(k),
        _capsule(v),
        _capsule(cu_seqlens_q),
        _capsule(cu_seqlens_k),
        _capsule(q_descale),
        _capsule(k_descale),
        _capsule(v_descale),
        _capsule(out),
        _capsule(lse) if return_lse else None,
        max_seqlen_q,
        max_seqlen_k,
        softmax_scale,
        causal,
        stream,
        **_Scores(window_left, window_right, softcap).native(),
    )
    return out, lse


@attention_varlen_op.register_fake
def _attention_varlen_fake(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    cu_seqlens_q: torch.Tensor,
    cu_seqlens_k: torch.Tensor,
    q_descale: torch.Tensor,
    k_descale: torch.Tensor,
    v_descale: torch.Tensor,
    max_seqlen_q: int,
    max_seqlen_k: int,
    softmax_scale: float,
    causal: bool,
    out_dtype: torch.dtype,
    return_lse: bool,
    window_left: int = -1,
    window_right: int = -1,
    softcap: float = 0.0,
) -> tuple[torch.Tensor, torch.Tensor]:
    """The outputs' shapes, types and device, without running anything."""
    return _outputs(q, out_dtype, return_lse)


@torch.library.custom_op("sdpa_fp8::attention_kvcache", mutates_args=(), device_types="cuda", tags=_stride_tags())
def attention_kvcache_op(
    q: torch.Tensor,
    k_cache: torch.Tensor,
    v_cache: torch.Tensor,
    cache_seqlens: torch.Tensor | None,
    page_table: torch.Tensor | None,
    q_descale: torch.Tensor,
    k_descale: torch.Tensor,
    v_descale: torch.Tensor,
    softmax_scale: float,
    causal: bool,
    out_dtype: torch.dtype,
    return_lse: bool,
    window_left: int = -1,
    window_right: int = -1,
    softcap: float = 0.0,
) -> tuple[torch.Tensor, torch.Tensor]:
    """``decode`` on a KV cache: Q ``[B, Hq, Sq, D]`` E4M3 contiguous, the
    caches ``[B, Skv, Hkv, D]`` (one query row; rows may be strided) or,
    with an int32 ``page_table`` ``[B, max_pages]``, pools ``[pages,
    page_size, Hkv, D]``, int32 ``cache_seqlens`` ``[B]`` or ``None``;
    returns O ``[B, Hq, Sq, D]`` and the log-sum-exp ``[B, Hq, Sq]`` float32
    (an empty ``[0]`` tensor, not written, unless ``return_lse``),
    launched on the current stream of q's device."""
    out, lse = _outputs(q, out_dtype, return_lse)
    stream = torch.cuda.current_stream(q.device).cuda_stream
    _native.attention_kvcache(
        _capsule(q),
        _capsule(k_cache),
        _capsule(v_cache),
        _capsule(q_descale),
        _capsule(k_descale),
        _capsule(v_descale),
        _capsule(out),
        _capsule(lse) if return_lse else None,
        None if cache_seqlens is None else _capsule(cache_seqlens),
        None if page_table is None else _capsule(page_table),
        softmax_scale,
        causal,
        stream,
        **_Scores(window_left, window_right, softcap).native(),
    )
    return out, lse


@attention_kvcache_op.register_fake
def _attention_kvcache_fake(
    q: torch.Tensor,
    k_cache: torch.Tensor,
    v_cache: torch.Tensor,
    cache_seqlens: torch.Tensor | None,
    page_table: torch.Tensor | None,
    q_descale: torch.Tensor,
    k_descale: torch.Tensor,
    v_descale: torch.Tensor,
    softmax_scale: float,
    causal: bool,
    out_dtype: torch.dtype,
    return_lse: bool,
    window_left: int = -1,
    window_right: int = -1,
    softcap: float = 0.0,
) -> tuple[torch.Tensor, torch.Tensor]:
    """The outputs' shapes, types and device, without running anything."""
    return _outputs(q, out_dtype, return_lse)
