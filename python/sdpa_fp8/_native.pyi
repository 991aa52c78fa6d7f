"""Type stubs of the Rust extension module ``sdpa_fp8._native``."""

__version__: str
HEAD_DIMS: tuple[int, ...]
"""The head dimensions the kernels serve."""
RECORD_SHAPES: tuple[str, ...]
"""The record set's shapes, ``B,H,S,D[,causal]`` (what ``sdpa bench`` takes by default)."""

def attention(
    q: object,
    k: object,
    v: object,
    q_descale: object,
    k_descale: object,
    v_descale: object,
    out: object,
    softmax_scale: float,
    causal: bool,
    stream: int,
) -> None:
    """Attention into ``out`` on CUDA stream ``stream``; every tensor a DLPack
    capsule (only read): Q, K, V ``[B, H, S, D]`` E4M3 (or its uint8 bits),
    descales ``(B, Hkv)`` float32, ``out`` ``[B, Hq, Sq, D]`` f16 or bf16,
    contiguous, on one CUDA device."""

def recommended_variant(
    q_shape: list[int], kv_shape: list[int], causal: bool, out_dtype: str, device: int, stream: int
) -> str:
    """The variant the library plans for these ``[B, H, S, D]`` shapes on ``device``."""
