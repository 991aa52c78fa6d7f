"""Type stubs of the Rust extension module ``sdpa_fp8._native``."""

__version__: str
HEAD_DIMS: tuple[int, ...]
"""The head dimensions the kernels serve."""
RECORD_SHAPES: tuple[str, ...]
"""The record set's shapes, ``B,H,S,D[,causal]`` (what ``sdpa bench`` takes by default)."""
MAX_SOFTCAP: float
"""The largest ``softcap`` the kernels take."""
DECODE_MAX_QUERIES: int
"""The most query rows per sequence the ``decode`` kernels take (they read Q dense)."""

def attention(
    q: object,
    k: object,
    v: object,
    q_descale: object,
    k_descale: object,
    v_descale: object,
    out: object,
    lse: object | None,
    softmax_scale: float,
    causal: bool,
    stream: int,
    *,
    window_size: tuple[int, int] = (-1, -1),
    softcap: float = 0.0,
) -> None:
    """Attention into ``out`` (and ``lse`` unless ``None``) on CUDA stream
    ``stream``; every tensor a DLPack capsule (only read): Q, K, V ``[B, H,
    S, D]`` E4M3 (or its uint8 bits), descales ``(B, Hkv)`` float32, ``out``
    ``[B, Hq, Sq, D]`` f16 or bf16, ``lse`` ``[B, Hq, Sq]`` float32,
    contiguous, on one CUDA device. ``window_size`` ``(left, right)`` (-1:
    no limit on that side) and ``softcap`` (0: none) as FlashAttention
    takes them; ``ValueError`` for a side below -1 or a negative or
    non-finite cap."""

def attention_bshd(
    q: object,
    k: object,
    v: object,
    q_descale: object,
    k_descale: object,
    v_descale: object,
    out: object,
    lse: object | None,
    softmax_scale: float,
    causal: bool,
    stream: int,
    *,
    window_size: tuple[int, int] = (-1, -1),
    softcap: float = 0.0,
) -> bool:
    """``attention`` on ``[B, S, H, D]`` tensors read in place: Q ``[B, Sq,
    Hq, D]``, K, V ``[B, Skv, Hkv, D]``, ``out`` ``[B, Sq, Hq, D]``, ``lse``
    ``[B, Sq, Hq]``, each contiguous in that order. ``False``, having launched nothing, where the
    variant the library recommends for the problem cannot read that layout."""

def attention_varlen(
    q: object,
    k: object,
    v: object,
    cu_seqlens_q: object,
    cu_seqlens_k: object,
    q_descale: object,
    k_descale: object,
    v_descale: object,
    out: object,
    lse: object | None,
    max_seqlen_q: int,
    max_seqlen_k: int,
    softmax_scale: float,
    causal: bool,
    stream: int,
    *,
    window_size: tuple[int, int] = (-1, -1),
    softcap: float = 0.0,
) -> None:
    """Attention over a packed batch into ``out`` (and ``lse`` unless
    ``None``) on CUDA stream ``stream``; every tensor a DLPack capsule (only
    read): Q ``[total_q, Hq, D]``, K, V ``[total_k, Hkv, D]`` E4M3 (or its
    uint8 bits), ``cu_seqlens_q``, ``cu_seqlens_k`` int32 ``[B + 1]``,
    descales ``(B, Hkv)`` float32, ``out`` ``[total_q, Hq, D]`` f16 or bf16,
    ``lse`` ``[total_q, Hq]`` float32, contiguous, on one CUDA device; every
    sequence at most ``max_seqlen_q`` queries and ``max_seqlen_k`` keys;
    ``window_size`` and ``softcap`` as ``attention`` takes them."""

def recommended_variant(
    q_shape: list[int],
    kv_shape: list[int],
    causal: bool,
    out_dtype: str,
    device: int,
    stream: int,
    *,
    window_size: tuple[int, int] = (-1, -1),
    softcap: float = 0.0,
) -> str:
    """The variant the library plans for these ``[B, H, S, D]`` shapes and
    options on ``device``."""
