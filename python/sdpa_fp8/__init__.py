"""FP8 (E4M3) scaled-dot-product attention for PyTorch on NVIDIA GPUs.

``attention`` mirrors FlashAttention-3's FP8 forward: E4M3 ``q``, ``k``,
``v`` in ``[batch, seq, heads, head_dim]`` (or ``[batch, heads, seq,
head_dim]`` with ``layout="bhsd"``), float32 descales of shape
``(batch, num_heads_k)``, a bf16 (default) or f16 output. ``quantize``
turns a float tensor into E4M3 codes and such descales. The op is
registered as ``torch.ops.sdpa_fp8.attention`` (a ``torch.library``
custom op with a fake implementation, so ``torch.compile`` traces it) and
runs on the current CUDA stream, so it can be captured in CUDA graphs.
"""

from ._api import Layout, attention, quantize, recommended_variant
from ._native import __version__

__all__ = ["Layout", "__version__", "attention", "quantize", "recommended_variant"]
