"""FP8 (E4M3) scaled-dot-product attention for PyTorch on NVIDIA GPUs.

``attention`` mirrors FlashAttention-3's FP8 forward: E4M3 ``q``, ``k``,
``v`` in ``[batch, seq, heads, head_dim]`` (or ``[batch, heads, seq,
head_dim]`` with ``layout="bhsd"``), float32 descales of shape
``(batch, num_heads_k)``, a bf16 (default) or f16 output.
``attention_varlen`` mirrors its variable-length forward: sequences packed
``[total_rows, heads, head_dim]`` with int32 ``cu_seqlens`` prefix sums.
``attention_with_kvcache`` mirrors its decoding forward on a KV cache
(``cache_seqlens``, a paged cache's ``page_table``, new keys ``k`` and
``v`` appended in place).
``quantize`` turns a float tensor into E4M3 codes and such descales. The
ops are registered as ``torch.ops.sdpa_fp8.attention`` and
``torch.ops.sdpa_fp8.attention_varlen`` (``torch.library`` custom ops with
fake implementations, so ``torch.compile`` traces them) and run on the
current CUDA stream, so they can be captured in CUDA graphs.
"""

from ._api import Layout, attention, attention_varlen, attention_with_kvcache, quantize, recommended_variant
from ._native import __version__

__all__ = [
    "Layout",
    "__version__",
    "attention",
    "attention_varlen",
    "attention_with_kvcache",
    "quantize",
    "recommended_variant",
]
