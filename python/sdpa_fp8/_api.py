"""The public calls: ``attention`` and ``attention_varlen``
(FlashAttention-3's FP8 interfaces), ``quantize`` and
``recommended_variant``, with every argument checked before anything is
launched."""

import math
from collections.abc import Sequence
from typing import Literal, NamedTuple

import torch

from . import _native
from ._op import E4M3, attention_bshd_op, attention_kvcache_op, attention_op, attention_varlen_op

Layout = Literal["bshd", "bhsd"]
"""Where the sequence and head axes are: ``"bshd"`` is ``[batch, seq,
heads, head_dim]`` (FlashAttention's), ``"bhsd"`` ``[batch, heads, seq,
head_dim]`` (what every kernel reads)."""

LAYOUTS: tuple[Layout, ...] = ("bshd", "bhsd")

# The output types the kernels write, by the names the native module uses.
OUTPUT_NAMES = {torch.bfloat16: "bf16", torch.float16: "f16"}

# E4M3's largest finite value: quantize maps each group's amax onto it.
E4M3_MAX = 448.0


class _Dims(NamedTuple):
    """The problem's sizes, read from ``[B, H, S, D]`` views."""

    batch: int
    heads_q: int
    heads_kv: int
    seq_q: int
    seq_kv: int
    head_dim: int


def _check_layout(layout: str) -> None:
    if layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {LAYOUTS}, got {layout!r}")


def _as_bhsd(t: torch.Tensor, layout: Layout) -> torch.Tensor:
    """``t`` as a ``[B, H, S, D]`` view (no copy)."""
    return t.transpose(1, 2) if layout == "bshd" else t


def _check_device(tensors: dict[str, torch.Tensor], device: torch.device) -> None:
    """Every tensor on one CUDA device (``meta`` tensors are allowed for
    shape inference: the op's fake implementation serves them)."""
    if device.type not in ("cuda", "meta"):
        raise ValueError(f"q must be a CUDA tensor, got one on {device}")
    for name, t in tensors.items():
        if t.device != device:
            raise ValueError(f"{name} is on {t.device}, but q is on {device}")


def _check_e4m3(tensors: dict[str, torch.Tensor], dims: int, axes: str) -> None:
    """Each of ``tensors`` a ``torch.float8_e4m3fn`` tensor of ``dims``
    dimensions (``axes`` names them in the error)."""
    for name, t in tensors.items():
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"{name} must be a torch.Tensor, got {type(t).__name__}")
        if t.dtype != E4M3:
            raise TypeError(
                f"{name} must be torch.float8_e4m3fn (E4M3 codes; sdpa_fp8.quantize makes them), got {t.dtype}"
            )
        if t.dim() != dims:
            raise ValueError(f"{name} must have {dims} dimensions ({axes}), got shape {tuple(t.shape)}")


def _check_inputs(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, layout: Layout) -> _Dims:
    """Types, ranks and shapes of Q, K and V; the sizes as ``[B, H, S, D]``."""
    _check_e4m3({"q": q, "k": k, "v": v}, 4, layout)
    qb, kb, vb = (_as_bhsd(t, layout) for t in (q, k, v))
    batch, heads_q, seq_q, head_dim = qb.shape
    _, heads_kv, seq_kv, _ = kb.shape
    if kb.shape != vb.shape:
        raise ValueError(f"k and v must have the same shape, got {tuple(k.shape)} and {tuple(v.shape)}")
    if kb.shape[0] != batch or kb.shape[3] != head_dim:
        raise ValueError(
            f"q and k must agree on batch and head_dim ({layout}), got {tuple(q.shape)} and {tuple(k.shape)}"
        )
    if head_dim not in _native.HEAD_DIMS:
        raise ValueError(f"head_dim {head_dim} is not supported (supported: {_native.HEAD_DIMS})")
    if min(batch, heads_q, heads_kv, seq_q, seq_kv) == 0:
        raise ValueError(f"zero-sized dimension: q {tuple(q.shape)}, k {tuple(k.shape)}")
    if heads_q % heads_kv != 0:
        raise ValueError(f"query heads ({heads_q}) must be a multiple of key/value heads ({heads_kv})")
    _check_device({"k": k, "v": v}, q.device)
    return _Dims(batch, heads_q, heads_kv, seq_q, seq_kv, head_dim)


def _descale(name: str, t: torch.Tensor | None, shape: tuple[int, int], device: torch.device) -> torch.Tensor:
    """A ``shape = (batch, num_heads_k)`` float32 contiguous descale on
    ``device``: the caller's (checked), or ones where it gave none."""
    if t is None:
        return torch.ones(shape, dtype=torch.float32, device=device)
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor or None, got {type(t).__name__}")
    if t.dtype != torch.float32:
        raise TypeError(f"{name} must be torch.float32, got {t.dtype}")
    if tuple(t.shape) != shape:
        raise ValueError(f"{name} must have shape (batch, num_heads_k) = {shape}, got {tuple(t.shape)}")
    if t.device != device:
        raise ValueError(f"{name} is on {t.device}, but q is on {device}")
    return t.contiguous()


def _check_out_dtype(out_dtype: torch.dtype) -> None:
    if out_dtype not in OUTPUT_NAMES:
        raise ValueError(f"out_dtype must be torch.bfloat16 or torch.float16, got {out_dtype}")


def _softmax_scale(softmax_scale: float | None, head_dim: int) -> float:
    """The caller's scale (checked finite and positive), ``1 / sqrt(D)``
    where it gave none."""
    scale = 1.0 / math.sqrt(head_dim) if softmax_scale is None else float(softmax_scale)
    if not (math.isfinite(scale) and scale > 0):
        raise ValueError(f"softmax_scale must be finite and positive, got {scale}")
    return scale


def _window_size(window_size: tuple[int, int]) -> tuple[int, int]:
    """FlashAttention's ``window_size = (left, right)``, checked: two ints
    (``SymInt`` under ``torch.compile`` with dynamic shapes), each -1 (no
    limit on that side) or at least 0."""
    if not isinstance(window_size, (tuple, list)) or len(window_size) != 2:
        raise TypeError(f"window_size must be a (left, right) tuple of ints, got {window_size!r}")
    for i, n in enumerate(window_size):
        if isinstance(n, bool) or not isinstance(n, (int, torch.SymInt)):
            raise TypeError(f"window_size[{i}] must be an int, got {type(n).__name__}")
        if n < -1:
            raise ValueError(f"window_size[{i}] must be -1 (no limit) or at least 0, got {n}")
    left, right = window_size
    return left, right


def _softcap(softcap: float) -> float:
    """FlashAttention's ``softcap``, checked: 0 (no cap), or finite, above 0
    and at most the kernels' ``MAX_SOFTCAP``."""
    if isinstance(softcap, bool) or not isinstance(softcap, (int, float, torch.SymFloat)):
        raise TypeError(f"softcap must be a float, got {type(softcap).__name__}")
    cap = float(softcap)
    if not (math.isfinite(cap) and cap >= 0):
        raise ValueError(f"softcap must be finite and at least 0 (0: no cap), got {cap}")
    if cap > _native.MAX_SOFTCAP:
        raise ValueError(f"softcap must be at most {_native.MAX_SOFTCAP}, got {cap}")
    return cap


class _Options(NamedTuple):
    """A call's checked options: the three descales and what the ops take
    after the tensors but the causal flag, the output type and the
    log-sum-exp's."""

    scales: list[torch.Tensor]
    softmax_scale: float
    window_left: int
    window_right: int
    softcap: float


def _options(
    descales: tuple[torch.Tensor | None, torch.Tensor | None, torch.Tensor | None],
    descale_shape: tuple[int, int],
    device: torch.device,
    head_dim: int,
    softmax_scale: float | None,
    window_size: tuple[int, int],
    softcap: float,
    out_dtype: torch.dtype,
) -> _Options:
    """Checks the options every call shares: the output type, the softmax
    scale (``1 / sqrt(head_dim)`` by default), the window, the cap and the
    descales (``descale_shape`` on ``device``, 1 where ``None``)."""
    _check_out_dtype(out_dtype)
    scale = _softmax_scale(softmax_scale, head_dim)
    left, right = _window_size(window_size)
    cap = _softcap(softcap)
    names = ("q_descale", "k_descale", "v_descale")
    scales = [_descale(name, t, descale_shape, device) for name, t in zip(names, descales)]
    return _Options(scales, scale, left, right, cap)


def _contiguous_bhsd(t: torch.Tensor, layout: Layout) -> torch.Tensor:
    """``t`` as a contiguous ``[B, H, S, D]`` tensor: a copy for ``bshd``
    (or a strided input), done on the uint8 bits so every backend can copy
    it."""
    return _contiguous_codes(_as_bhsd(t, layout))


def _contiguous_codes(t: torch.Tensor) -> torch.Tensor:
    """E4M3 ``t`` contiguous: itself, or a copy made on the uint8 bits so
    every backend can copy it."""
    return t if t.is_contiguous() else t.view(torch.uint8).contiguous().view(E4M3)


def _rows_in_place(t: torch.Tensor) -> bool:
    """Whether the kernels read E4M3 ``t`` (``[B, S, H, D]``, or a packed
    ``[rows, H, D]``) in place: contiguous, or strided as a slice of a fused
    QKV is: the last dimension contiguous, the dimensions before the heads
    one row index (the batches ``S`` rows apart), and the row and head
    strides positive multiples of 16 elements (the kernels' 16-byte
    copies)."""
    if t.is_contiguous():
        return True
    *rows, heads, head_dim = t.shape
    *row_strides, head_stride, dim_stride = t.stride()
    if head_dim > 1 and dim_stride != 1:
        return False
    strides, span = [], None
    for n, stride in reversed(list(zip(rows, row_strides))):
        if n == 1:
            continue
        if span is None:
            strides.append(stride)
        elif stride != span:
            return False
        span = n * stride
    if heads > 1:
        strides.append(head_stride)
    return all(0 < s < 2**32 and s % 16 == 0 for s in strides)


def _in_place(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, bool]:
    """Whether the kernels read ``[B, S, H, D]`` or packed Q, K and V in
    place (``_rows_in_place``, K and V of equal strides), with Q: itself,
    or a contiguous copy where it is strided and short enough (at most
    ``DECODE_MAX_QUERIES`` rows per sequence) that ``decode``, which reads
    Q dense, may run it; the copy is a few KiB."""
    if not (_rows_in_place(k) and _rows_in_place(v) and k.stride() == v.stride()):
        return q, False
    if not q.is_contiguous() and q.dim() == 4 and q.shape[1] <= _native.DECODE_MAX_QUERIES:
        q = _contiguous_codes(q)
    return q, _rows_in_place(q)


def attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    *,
    q_descale: torch.Tensor | None = None,
    k_descale: torch.Tensor | None = None,
    v_descale: torch.Tensor | None = None,
    softmax_scale: float | None = None,
    causal: bool = False,
    window_size: tuple[int, int] = (-1, -1),
    softcap: float = 0.0,
    out_dtype: torch.dtype = torch.bfloat16,
    layout: Layout = "bshd",
    return_lse: bool = False,
) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
    """FP8 attention, ``O = softmax(softmax_scale * Q K^T [+ mask]) V``, as
    FlashAttention-3's FP8 ``flash_attn_func`` takes it.

    Args:
        q: E4M3 (``torch.float8_e4m3fn``) ``[B, Sq, Hq, D]``
            (``[B, Hq, Sq, D]`` with ``layout="bhsd"``), on a CUDA device.
        k, v: E4M3 ``[B, Skv, Hkv, D]`` (``[B, Hkv, Skv, D]``), ``Hq`` a
            multiple of ``Hkv`` (grouped-query attention; query head ``h``
            reads key/value head ``h // (Hq // Hkv)``). ``D`` is 64 or 128.
        q_descale, k_descale, v_descale: float32 ``(B, Hkv)``: the value of
            an element is its E4M3 code times its descale; query head ``h``
            takes the descale of its key/value head. ``None`` means 1.
        softmax_scale: the factor on Q K^T, ``1 / sqrt(D)`` by default.
        causal: mask keys after the query's position, aligned bottom-right
            (the last query sees the last key); a row that sees no key is 0.
        window_size: ``(left, right)``: query row ``i``, at key position
            ``p = i + Skv - Sq`` (bottom-right aligned, as ``causal``), sees
            only the keys ``p - left ..= p + right``; -1 is no limit on that
            side (FlashAttention's sliding window; with ``causal`` the right
            side is 0). A row whose window holds no key is 0.
        softcap: replace each score ``s`` by ``softcap * tanh(s /
            softcap)`` before the softmax (Gemma 2's); 0, the default, caps
            nothing. Windows and caps run on the ``wgmma``, ``split-n64``,
            ``split``, ``mma`` and ``decode`` kernels: the recommended
            variant's where it has them, else ``wgmma`` on Hopper and
            ``split`` elsewhere.
        out_dtype: ``torch.bfloat16`` (default) or ``torch.float16``.
        layout: ``"bshd"`` (default) or ``"bhsd"``. Contiguous ``bhsd``
            inputs are read in place. ``bshd`` inputs, contiguous or with
            strided rows (slices of a fused QKV such as ``qkv[:, :, 0]`` of
            a ``[B, S, 3, H, D]`` tensor: the last dimension contiguous,
            the batches ``S`` rows apart, row and head strides multiples of
            16 elements, K and V of equal strides), are read in place, into
            a contiguous ``[B, Sq, Hq, D]`` output, where the kernel variant
            the library recommends for the problem reads that layout
            (``wgmma`` and ``wgmma-fp8pv``, and ``decode`` with one query
            row, on Hopper); otherwise they are copied into ``[B, H, S, D]``
            and the result back into that output. A strided Q of at most 16
            rows per sequence is copied (``decode`` reads Q dense). Other
            strided inputs are copied into ``[B, H, S, D]`` (one transpose
            each), and for ``bshd`` the output is then a ``[B, Sq, Hq, D]``
            view of the ``[B, Hq, Sq, D]`` result.
        return_lse: also return each query row's softmax log-sum-exp (every
            variant writes it).

    Returns:
        O, in ``out_dtype`` and ``layout``, on q's device; with
        ``return_lse``, ``(O, lse)``, ``lse`` float32 ``[B, Sq, Hq]`` for
        ``bshd`` (``[B, Hq, Sq]`` for ``bhsd``; both follow the output's
        rows, and ``lse.transpose(1, 2)`` of the ``bshd`` one is
        FlashAttention's ``[B, Hq, Sq]``): the natural log of the sum over
        the keys a row sees of ``exp(softmax_scale * q.k)`` (of the capped
        scores with ``softcap``), ``-inf`` for a row that sees none. The work
        is queued on the current CUDA stream.

    Raises:
        TypeError: an argument of the wrong type or dtype.
        ValueError: shapes that do not fit together, an unsupported head
            dimension, tensors off the GPU or on different devices, a bad
            ``softmax_scale``, ``window_size``, ``softcap``, ``out_dtype`` or
            ``layout``.
        RuntimeError: a CUDA failure (no driver, a device the kernels cannot
            run on).
    """
    _check_layout(layout)
    dims = _check_inputs(q, k, v, layout)
    descales = (q_descale, k_descale, v_descale)
    shape = (dims.batch, dims.heads_kv)
    o = _options(descales, shape, q.device, dims.head_dim, softmax_scale, window_size, softcap, out_dtype)
    scales = o.scales
    options = (o.softmax_scale, bool(causal), out_dtype, bool(return_lse), o.window_left, o.window_right, o.softcap)
    q_in_place, in_place = _in_place(q, k, v) if layout == "bshd" else (q, False)
    if in_place:
        out, lse = attention_bshd_op(q_in_place, k, v, *scales, *options)
    else:
        bhsd = [_contiguous_bhsd(t, layout) for t in (q, k, v)]
        out, lse = attention_op(*bhsd, *scales, *options)
        # [B, Hq, Sq, D] and [B, Hq, Sq] seen in the layout's order.
        out, lse = _as_bhsd(out, layout), _as_bhsd(lse, layout) if return_lse else lse
    return (out, lse) if return_lse else out


def _check_packed_inputs(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> tuple[int, int]:
    """Types, ranks and shapes of packed Q, K and V; ``(Hkv, D)``."""
    _check_e4m3({"q": q, "k": k, "v": v}, 3, "total_rows, heads, head_dim")
    total_q, heads_q, head_dim = q.shape
    total_k, heads_kv, _ = k.shape
    if k.shape != v.shape:
        raise ValueError(f"k and v must have the same shape, got {tuple(k.shape)} and {tuple(v.shape)}")
    if k.shape[2] != head_dim:
        raise ValueError(f"q and k must agree on head_dim, got {tuple(q.shape)} and {tuple(k.shape)}")
    if head_dim not in _native.HEAD_DIMS:
        raise ValueError(f"head_dim {head_dim} is not supported (supported: {_native.HEAD_DIMS})")
    if min(total_q, total_k, heads_q, heads_kv) == 0:
        raise ValueError(f"zero-sized dimension: q {tuple(q.shape)}, k {tuple(k.shape)}")
    if heads_q % heads_kv != 0:
        raise ValueError(f"query heads ({heads_q}) must be a multiple of key/value heads ({heads_kv})")
    _check_device({"k": k, "v": v}, q.device)
    return heads_kv, head_dim


def _check_prefix_sums(cu_seqlens_q: torch.Tensor, cu_seqlens_k: torch.Tensor, device: torch.device) -> int:
    """Both prefix sums int32, one-dimensional, of ``batch + 1 >= 2``
    entries, on ``device``; ``batch``."""
    for name, t in (("cu_seqlens_q", cu_seqlens_q), ("cu_seqlens_k", cu_seqlens_k)):
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"{name} must be a torch.Tensor, got {type(t).__name__}")
        if t.dtype != torch.int32:
            raise TypeError(f"{name} must be torch.int32, got {t.dtype}")
        if t.dim() != 1 or t.shape[0] < 2:
            raise ValueError(f"{name} must have shape (batch + 1,) with batch >= 1, got {tuple(t.shape)}")
    if cu_seqlens_q.shape != cu_seqlens_k.shape:
        raise ValueError(
            f"cu_seqlens_q and cu_seqlens_k must have the same length (batch + 1), "
            f"got {cu_seqlens_q.shape[0]} and {cu_seqlens_k.shape[0]}"
        )
    _check_device({"cu_seqlens_q": cu_seqlens_q, "cu_seqlens_k": cu_seqlens_k}, device)
    return cu_seqlens_q.shape[0] - 1


def _max_seqlen(name: str, value: int) -> int:
    """A longest length: a positive integer (a ``SymInt`` under
    ``torch.compile`` with dynamic shapes)."""
    if isinstance(value, bool) or not isinstance(value, (int, torch.SymInt)):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if value <= 0:
        raise ValueError(f"{name} must be positive, got {value}")
    return value


def attention_varlen(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    cu_seqlens_q: torch.Tensor,
    cu_seqlens_k: torch.Tensor,
    max_seqlen_q: int,
    max_seqlen_k: int,
    *,
    q_descale: torch.Tensor | None = None,
    k_descale: torch.Tensor | None = None,
    v_descale: torch.Tensor | None = None,
    softmax_scale: float | None = None,
    causal: bool = False,
    window_size: tuple[int, int] = (-1, -1),
    softcap: float = 0.0,
    out_dtype: torch.dtype = torch.bfloat16,
    return_lse: bool = False,
) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
    """FP8 attention over a packed batch of sequences of their own lengths,
    as FlashAttention-3's FP8 ``flash_attn_varlen_func`` takes it: sequence
    ``b`` is rows ``cu_seqlens_q[b] : cu_seqlens_q[b + 1]`` of Q (and O)
    attending to rows ``cu_seqlens_k[b] : cu_seqlens_k[b + 1]`` of K and V.

    Runs on Hopper (sm_90a) only, on the ``wgmma`` kernels.

    Args:
        q: E4M3 (``torch.float8_e4m3fn``) ``[total_q, Hq, D]`` on a CUDA
            device.
        k, v: E4M3 ``[total_k, Hkv, D]``, ``Hq`` a multiple of ``Hkv``
            (query head ``h`` reads key/value head ``h // (Hq // Hkv)``).
            ``D`` is 64 or 128. Q, K and V may have strided rows (slices of
            a fused ``[total, 3, H, D]`` QKV: the last dimension contiguous,
            row and head strides multiples of 16 elements, K and V of equal
            strides), read in place; other strided inputs are copied.
        cu_seqlens_q, cu_seqlens_k: ``torch.int32`` ``[B + 1]`` prefix sums
            of the query and key lengths (from 0, non-decreasing), on q's
            device. They are read on the GPU only, never on the host: a bad
            value gives wrong rows for its sequences (a decreasing pair is
            an empty sequence, a sequence longer than ``max_seqlen_*`` is
            cut at it, a row past the total is not read), never a read
            outside the tensors.
        max_seqlen_q, max_seqlen_k: the longest query and key lengths
            (positive ints; the plan, and the grid, are made for them).
        q_descale, k_descale, v_descale: float32 ``(B, Hkv)``, per
            (sequence, key/value head), as ``attention`` takes them.
            ``None`` means 1.
        softmax_scale: the factor on Q K^T, ``1 / sqrt(D)`` by default.
        causal: mask keys after the query, aligned bottom-right in each
            sequence (its last query sees its last key); a row that sees no
            key is 0 (and its log-sum-exp ``-inf``).
        window_size: ``(left, right)``, as ``attention`` takes it, aligned
            bottom-right in each sequence; -1 is no limit on that side.
        softcap: as ``attention`` takes it; 0 caps nothing.
        out_dtype: ``torch.bfloat16`` (default) or ``torch.float16``.
        return_lse: also return each row's softmax log-sum-exp.

    Returns:
        O ``[total_q, Hq, D]`` in ``out_dtype``; with ``return_lse``, ``(O,
        lse)``, ``lse`` float32 ``[total_q, Hq]``: the natural log of the sum
        over the keys a row sees of ``exp(softmax_scale * q.k)``.
        FlashAttention's varlen log-sum-exp is ``[Hq, total_q]``:
        ``lse.T`` is that layout. The work is queued on the current CUDA
        stream.

    Raises:
        TypeError: an argument of the wrong type or dtype (prefix sums not
            int32 among them).
        ValueError: shapes that do not fit together (descales not ``(B,
            Hkv)`` for ``B = len(cu_seqlens_q) - 1``, prefix sums of
            different lengths), an unsupported head dimension, tensors off
            the GPU or on different devices, a bad ``max_seqlen_*``,
            ``softmax_scale``, ``window_size``, ``softcap`` or ``out_dtype``.
        RuntimeError: a CUDA failure, or a GPU other than Hopper.
    """
    heads_kv, head_dim = _check_packed_inputs(q, k, v)
    batch = _check_prefix_sums(cu_seqlens_q, cu_seqlens_k, q.device)
    max_q = _max_seqlen("max_seqlen_q", max_seqlen_q)
    max_k = _max_seqlen("max_seqlen_k", max_seqlen_k)
    descales = (q_descale, k_descale, v_descale)
    o = _options(descales, (batch, heads_kv), q.device, head_dim, softmax_scale, window_size, softcap, out_dtype)
    # Strided rows (slices of a fused QKV) are read in place where the
    # kernels can; anything else is copied contiguous first.
    in_place = _rows_in_place(q) and _rows_in_place(k) and _rows_in_place(v) and k.stride() == v.stride()
    if not in_place:
        q, k, v = (_contiguous_codes(t) for t in (q, k, v))
    out, lse = attention_varlen_op(
        q,
        k,
        v,
        cu_seqlens_q.contiguous(),
        cu_seqlens_k.contiguous(),
        *o.scales,
        max_q,
        max_k,
        o.softmax_scale,
        bool(causal),
        out_dtype,
        bool(return_lse),
        o.window_left,
        o.window_right,
        o.softcap,
    )
    return (out, lse) if return_lse else out


def _check_int32(name: str, t: torch.Tensor, dims: int, device: torch.device) -> None:
    """``t`` an int32 tensor of ``dims`` dimensions on ``device``."""
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(t).__name__}")
    if t.dtype != torch.int32:
        raise TypeError(f"{name} must be torch.int32, got {t.dtype}")
    if t.dim() != dims:
        raise ValueError(f"{name} must have {dims} dimension(s), got shape {tuple(t.shape)}")
    _check_device({name: t}, device)


def _identity_pages(k_cache: torch.Tensor, v_cache: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Contiguous ``[B, Skv, Hkv, D]`` caches as pools of pages of the
    largest power of two (32 to 65536 keys) that divides ``Skv``, and the
    page table that names each batch's own pages in order: the same keys,
    read in place by ``decode``'s paged path, which takes several query
    rows per sequence."""
    b, skv, hkv, d = k_cache.shape
    page_size = min(skv & -skv, 1 << 16)
    if page_size < 32 or not (k_cache.is_contiguous() and v_cache.is_contiguous()):
        raise ValueError(
            "more than one query row per sequence needs a page_table, or contiguous caches whose length is a "
            f"multiple of 32 (read as pages); got caches of shape {tuple(k_cache.shape)}"
            + ("" if k_cache.is_contiguous() and v_cache.is_contiguous() else " that are not contiguous")
        )
    pages = skv // page_size
    table = torch.arange(b * pages, dtype=torch.int32, device=k_cache.device).view(b, pages)
    pool = (b * pages, page_size, hkv, d)
    return k_cache.view(pool), v_cache.view(pool), table


def _cache_capacity(k_cache: torch.Tensor, page_table: torch.Tensor | None) -> int:
    """How many keys one sequence's part of the cache holds: ``Skv`` of a
    ``[B, Skv, Hkv, D]`` cache, ``max_pages * page_size`` of a paged one."""
    return k_cache.shape[1] if page_table is None else page_table.shape[1] * k_cache.shape[1]


def _check_new_keys(
    k: torch.Tensor | None,
    v: torch.Tensor | None,
    k_cache: torch.Tensor,
    cache_seqlens: torch.Tensor | None,
    page_table: torch.Tensor | None,
    batch: int,
    device: torch.device,
) -> None:
    """FlashAttention-3's ``k`` and ``v`` to append: given together and with
    ``cache_seqlens``, E4M3 ``[batch, S_new, Hkv, D]`` of the cache's heads
    and head dimension, no more rows than a sequence's part of the cache
    holds, on ``device``."""
    if k is None or v is None:
        given, missing = ("k", "v") if v is None else ("v", "k")
        raise ValueError(f"k and v must be given together (new keys and their values), got {given} without {missing}")
    if cache_seqlens is None:
        raise ValueError("appending k and v needs cache_seqlens (each sequence's length before them)")
    _check_e4m3({"k": k, "v": v}, 4, "batch, seq, heads, head_dim")
    if k.shape != v.shape:
        raise ValueError(f"k and v must have the same shape, got {tuple(k.shape)} and {tuple(v.shape)}")
    heads_kv, head_dim = k_cache.shape[2:]
    if k.shape[0] != batch or k.shape[2:] != k_cache.shape[2:]:
        raise ValueError(
            "k must have shape (batch, seqlen_new, num_heads_k, head_dim) = "
            f"({batch}, seqlen_new, {heads_kv}, {head_dim}) as q and k_cache, got {tuple(k.shape)}"
        )
    if k.numel() == 0:
        raise ValueError(f"zero-sized dimension: k {tuple(k.shape)}")
    capacity = _cache_capacity(k_cache, page_table)
    if k.shape[1] > capacity:
        raise ValueError(f"k has {k.shape[1]} rows per sequence, more than the cache holds ({capacity})")
    _check_device({"k": k, "v": v}, device)


def _check_cache_batch(
    k_cache: torch.Tensor, cache_seqlens: torch.Tensor, page_table: torch.Tensor | None, batch: int
) -> None:
    """The lengths, and the cache or its page table, of ``batch``
    sequences (and a pool that has pages): an append's indices then lie
    inside them."""
    if tuple(cache_seqlens.shape) != (batch,):
        raise ValueError(f"cache_seqlens must have shape (batch,) = ({batch},), got {tuple(cache_seqlens.shape)}")
    if page_table is None and k_cache.shape[0] != batch:
        raise ValueError(f"k_cache must have q's batch {batch}, got shape {tuple(k_cache.shape)}")
    if page_table is not None and page_table.shape[0] != batch:
        raise ValueError(
            f"page_table must have shape (batch, max_pages) with batch {batch}, got {tuple(page_table.shape)}"
        )
    if k_cache.shape[0] == 0:
        raise ValueError(f"k_cache has no pages to append to, got shape {tuple(k_cache.shape)}")


class _AppendTargets(NamedTuple):
    """Where an append writes, for each new row ``[B, S_new]``: the cache
    row (an index into the uint8 view of a cache), the new row whose bytes
    go there (an index into ``k`` and ``v``), and whether they do (else the
    cache row's own bytes go back)."""

    cache_rows: tuple[torch.Tensor, torch.Tensor]
    new_rows: tuple[torch.Tensor, torch.Tensor]
    fresh: torch.Tensor


def _cache_rows(
    cache: torch.Tensor, page_table: torch.Tensor | None, positions: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """The index of each sequence's cache row at ``positions`` (int64
    ``[B, S]``, inside the cache): ``(batch, row)`` into ``[B, Skv, Hkv,
    D]``, or ``(page, slot)`` into a pool ``[pages, page_size, Hkv, D]``, a
    page-table entry outside the pool clamped into it as ``decode`` reads
    it."""
    if page_table is None:
        batches = torch.arange(positions.shape[0], device=positions.device)[:, None]
        return batches.expand_as(positions), positions
    pages, page_size = cache.shape[:2]
    page = page_table.gather(1, positions // page_size).long().clamp(0, pages - 1)
    return page, positions % page_size


def _append_targets(
    k_cache: torch.Tensor, page_table: torch.Tensor | None, cache_seqlens: torch.Tensor, s_new: int
) -> _AppendTargets:
    """Where new row ``i`` of sequence ``b`` goes: position
    ``cache_seqlens[b] + i`` of its part of the cache.

    A position outside it (below 0, or at or past the capacity) is clamped
    onto the nearest row inside, which then gets the same bytes from every
    write that lands on it: the new row of its own position where there is
    one, else the bytes it holds. So a new row outside the cache is
    dropped, every index stays in bounds, and no value is read on the host.
    """
    start = cache_seqlens.long()[:, None]
    positions = start + torch.arange(s_new, device=start.device)
    clamped = positions.clamp(0, _cache_capacity(k_cache, page_table) - 1)
    source = clamped - start  # the new row whose position the clamped one is
    fresh = (source >= 0) & (source < s_new)
    batches = torch.arange(start.shape[0], device=start.device)[:, None]
    new_rows = (batches.expand_as(source), source.clamp(0, s_new - 1))
    return _AppendTargets(_cache_rows(k_cache, page_table, clamped), new_rows, fresh)


def _write_rows(cache: torch.Tensor, new: torch.Tensor, targets: _AppendTargets) -> None:
    """``new``'s rows written into E4M3 ``cache`` in place (strided caches
    too) at ``targets``, on uint8 views: not every backend index-puts
    float8."""
    rows = cache.view(torch.uint8)
    fresh = new.view(torch.uint8)[targets.new_rows]
    held = rows[targets.cache_rows]
    rows[targets.cache_rows] = torch.where(targets.fresh[:, :, None, None], fresh, held)


def _append_new_keys(
    k_cache: torch.Tensor,
    v_cache: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    cache_seqlens: torch.Tensor,
    page_table: torch.Tensor | None,
) -> torch.Tensor:
    """FlashAttention-3's append: ``k`` and ``v`` (``[B, S_new, Hkv, D]``)
    written into the caches in place at each sequence's positions
    ``cache_seqlens[b] ..`` (``_append_targets``); returns the lengths after
    them, ``cache_seqlens + S_new``, a new tensor."""
    targets = _append_targets(k_cache, page_table, cache_seqlens, k.shape[1])
    _write_rows(k_cache, k, targets)
    _write_rows(v_cache, v, targets)
    return cache_seqlens + k.shape[1]


def attention_with_kvcache(
    q: torch.Tensor,
    k_cache: torch.Tensor,
    v_cache: torch.Tensor,
    *,
    k: torch.Tensor | None = None,
    v: torch.Tensor | None = None,
    cache_seqlens: torch.Tensor | None = None,
    page_table: torch.Tensor | None = None,
    q_descale: torch.Tensor | None = None,
    k_descale: torch.Tensor | None = None,
    v_descale: torch.Tensor | None = None,
    softmax_scale: float | None = None,
    causal: bool = False,
    window_size: tuple[int, int] = (-1, -1),
    softcap: float = 0.0,
    out_dtype: torch.dtype = torch.bfloat16,
    return_lse: bool = False,
) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
    """Decoding against a KV cache, as FlashAttention-3's
    ``flash_attn_with_kvcache`` takes it (new keys appended with ``k`` and
    ``v``; no rotary embeddings): the ``decode`` kernels, which read each
    K/V byte once for the query heads that share it and split long caches
    across the GPU.

    Args:
        q: E4M3 ``[B, Sq, Hq, D]`` on a CUDA device: one query row per
            sequence or a few (speculative tokens), or a prefill chunk over
            the cached prefix (with ``causal``, its last row sees the last
            key). Every length runs on ``decode``; past about 16 rows it is
            slower per query than ``attention``'s prefill kernels, which
            read no cache (lab/paged-prefill.md measures it).
        k_cache, v_cache: E4M3 ``[B, Skv, Hkv, D]``, read in place (rows may
            be strided, e.g. the halves of a fused ``[B, Skv, 2, Hkv, D]``
            cache); or, with ``page_table``, pools ``[num_pages, page_size,
            Hkv, D]`` (``page_size`` a power of two from 32 to 65536).
            ``Hq`` a multiple of ``Hkv``; ``D`` 64 or 128. With more than
            one query row and no ``page_table`` the caches must be
            contiguous with ``Skv`` a multiple of 32 (they are read as
            pages).
        k, v: new keys and values to append first, E4M3 ``[B, S_new, Hkv,
            D]`` (rows may be strided), given together and with
            ``cache_seqlens``. They are written into the caches in place,
            sequence ``b``'s at positions ``cache_seqlens[b] ..
            cache_seqlens[b] + S_new`` (in a paged cache, position ``p`` is
            slot ``p % page_size`` of page ``page_table[b, p //
            page_size]``), and attention then runs over ``cache_seqlens +
            S_new`` keys; ``cache_seqlens`` itself is left as it is. Their
            descales are the caches' (``k_descale``, ``v_descale``):
            quantize them with those. As in FlashAttention-3, the new rows
            must fit: ``cache_seqlens[b] + S_new`` at most ``Skv`` (paged:
            ``max_pages * page_size``). The lengths stay on the GPU, so
            this is not checked: a new row whose position lies outside the
            cache is dropped, changing no other byte (every index is clamped
            into the cache), and the keys seen are clamped to the cache as
            ever.
        cache_seqlens: int32 ``[B]``: sequence ``b`` holds its first
            ``cache_seqlens[b]`` keys (clamped to the cache on the device),
            before ``k`` and ``v`` are appended; ``None``: every key.
        page_table: int32 ``[B, max_pages]``: sequence ``b``'s keys ``i *
            page_size ..`` live in page ``page_table[b, i]`` (an entry
            outside the pool is clamped, never read or written past).
        q_descale, k_descale, v_descale, softmax_scale, window_size,
            softcap, out_dtype: as ``attention``.
        causal: each sequence's last query sees its last key
            (``cache_seqlens[b] - 1``; with ``k``, the last new one,
            ``cache_seqlens[b] + S_new - 1``), the others one key fewer
            each.
        return_lse: also return each query row's log-sum-exp.

    Returns:
        O ``[B, Sq, Hq, D]`` in ``out_dtype`` (contiguous at one query row,
        else a view of ``[B, Hq, Sq, D]`` memory); with ``return_lse``,
        ``(O, lse)``, ``lse`` float32 ``[B, Sq, Hq]`` (the output's rows),
        ``-inf`` for a row that sees no key. Queued on the current CUDA
        stream.

    Raises:
        TypeError, ValueError, RuntimeError: as ``attention``; ``decode``'s
        limits (``RuntimeError``) where the device cannot run it. Arguments
        are checked before ``k`` and ``v`` are written.
    """
    _check_e4m3({"q": q, "k_cache": k_cache, "v_cache": v_cache}, 4, "batch, seq, heads, head_dim")
    batch, sq, heads_q, head_dim = q.shape
    if k_cache.shape != v_cache.shape:
        raise ValueError(f"k_cache and v_cache must have the same shape, got {tuple(k_cache.shape)} and {tuple(v_cache.shape)}")
    heads_kv = k_cache.shape[2]
    if sq < 1:
        raise ValueError(f"q must have at least one query row per sequence, got {sq}")
    _check_device({"k_cache": k_cache, "v_cache": v_cache}, q.device)
    if cache_seqlens is not None:
        _check_int32("cache_seqlens", cache_seqlens, 1, q.device)
    if page_table is not None:
        _check_int32("page_table", page_table, 2, q.device)
    appends = k is not None or v is not None
    if appends:
        _check_new_keys(k, v, k_cache, cache_seqlens, page_table, batch, q.device)
        _check_cache_batch(k_cache, cache_seqlens, page_table, batch)
    descales = (q_descale, k_descale, v_descale)
    o = _options(descales, (batch, heads_kv), q.device, head_dim, softmax_scale, window_size, softcap, out_dtype)
    if page_table is None and sq > 1:
        # Views of the caller's caches (an append writes through them).
        k_cache, v_cache, page_table = _identity_pages(k_cache, v_cache)
    if appends:
        # Into the caller's caches, before the copies below read them.
        cache_seqlens = _append_new_keys(k_cache, v_cache, k, v, cache_seqlens, page_table)
    if page_table is not None:
        k_cache, v_cache, page_table = (_contiguous_codes(k_cache), _contiguous_codes(v_cache), page_table.contiguous())
    elif not (_rows_in_place(k_cache) and _rows_in_place(v_cache) and k_cache.stride() == v_cache.stride()):
        # Strides the kernels cannot read: the whole caches copied.
        k_cache, v_cache = _contiguous_codes(k_cache), _contiguous_codes(v_cache)
    # Q, the output and the log-sum-exp go [B, Hq, Sq, ...]: views at one
    # query row, a copy of Q (a few KiB) at more.
    out, lse = attention_kvcache_op(
        _contiguous_codes(q.transpose(1, 2)),
        k_cache,
        v_cache,
        None if cache_seqlens is None else cache_seqlens.contiguous(),
        page_table,
        *o.scales,
        o.softmax_scale,
        bool(causal),
        out_dtype,
        bool(return_lse),
        o.window_left,
        o.window_right,
        o.softcap,
    )
    out = out.transpose(1, 2)
    return (out, lse.transpose(1, 2)) if return_lse else out


def quantize(
    x: torch.Tensor,
    *,
    num_heads_k: int | None = None,
    layout: Layout = "bshd",
) -> tuple[torch.Tensor, torch.Tensor]:
    """E4M3 codes of ``x`` and their float32 descales, one per (batch, head
    group): the group's largest magnitude maps to 448, E4M3's largest value.

    Args:
        x: a floating tensor ``[B, S, H, D]`` (``[B, H, S, D]`` with
            ``layout="bhsd"``).
        num_heads_k: group the ``H`` heads into this many groups of
            consecutive heads (a query tensor's key/value heads, for the
            ``(B, num_heads_k)`` Q descale ``attention`` takes); ``None``
            means one group per head (K and V).
        layout: ``"bshd"`` (default) or ``"bhsd"``.

    Returns:
        ``(codes, descale)``: ``codes`` a ``torch.float8_e4m3fn`` tensor of
        ``x``'s shape and layout, ``descale`` float32 ``(B, num_heads_k or
        H)``, such that ``codes * descale`` (per head) approximates ``x``. A
        group of zeros gets descale 1.
    """
    _check_layout(layout)
    if not isinstance(x, torch.Tensor) or not x.is_floating_point():
        raise TypeError(f"x must be a floating-point torch.Tensor, got {getattr(x, 'dtype', type(x).__name__)}")
    if x.dim() != 4:
        raise ValueError(f"x must have 4 dimensions ({layout}), got shape {tuple(x.shape)}")
    batch, heads = _as_bhsd(x, layout).shape[:2]
    groups = heads if num_heads_k is None else int(num_heads_k)
    if groups <= 0 or heads % groups != 0:
        raise ValueError(f"num_heads_k ({num_heads_k}) must divide the {heads} heads of x")
    amax = _as_bhsd(x, layout).abs().amax(dim=(2, 3)).float()
    amax = amax.view(batch, groups, heads // groups).amax(dim=2)
    descale = torch.where(amax > 0, amax / E4M3_MAX, torch.ones_like(amax))
    per_head = descale.repeat_interleave(heads // groups, dim=1)
    per_head = per_head[:, None, :, None] if layout == "bshd" else per_head[:, :, None, None]
    codes = (x.float() / per_head).clamp(-E4M3_MAX, E4M3_MAX).to(E4M3)
    return codes, descale


def recommended_variant(
    q_shape: Sequence[int],
    k_shape: Sequence[int],
    *,
    causal: bool = False,
    window_size: tuple[int, int] = (-1, -1),
    softcap: float = 0.0,
    out_dtype: torch.dtype = torch.bfloat16,
    layout: Layout = "bshd",
    device: int | torch.device | None = None,
) -> str:
    """The kernel variant ``attention`` runs for Q and K of these shapes (in
    ``layout``, e.g. ``q.shape``) with these options on ``device`` (the
    current CUDA device by default): the library's recommendation, by the
    name ``sdpa bench --variants`` and ``sdpa info`` use."""
    _check_layout(layout)
    _check_out_dtype(out_dtype)
    scores = {"window_size": _window_size(window_size), "softcap": _softcap(softcap)}

    def bhsd(shape: Sequence[int]) -> list[int]:
        dims = [int(n) for n in shape]
        if len(dims) != 4:
            raise ValueError(f"shapes must have 4 dimensions, got {shape}")
        return [dims[0], dims[2], dims[1], dims[3]] if layout == "bshd" else dims

    if isinstance(device, int):
        ordinal = device
    else:
        index = None if device is None else torch.device(device).index
        ordinal = torch.cuda.current_device() if index is None else index
    stream = torch.cuda.current_stream(ordinal).cuda_stream
    output = OUTPUT_NAMES[out_dtype]
    return _native.recommended_variant(bhsd(q_shape), bhsd(k_shape), bool(causal), output, ordinal, stream, **scores)
