"""FP8 attention from PyTorch with sdpa_fp8, checked against torch's own
bf16 attention on the same inputs.

    pip install --no-deps sdpa_fp8-*.whl   # torch already installed
    python python/examples/attention.py

Quantizes bf16 Q, K, V (grouped-query: 16 query heads on 4 key/value
heads) to E4M3 with FlashAttention-3's (batch, num_heads_k) descales, runs
causal attention on the current CUDA stream, and prints how far the result
is from ``torch.nn.functional.scaled_dot_product_attention`` in bf16.
"""

import sys

import torch
import torch.nn.functional as F

import sdpa_fp8


def main() -> int:
    if not torch.cuda.is_available():
        print("this example needs a CUDA GPU (compute capability 8.9 or newer)", file=sys.stderr)
        return 1
    batch, seq, heads, kv_heads, head_dim = 2, 1024, 16, 4, 128
    torch.manual_seed(0)
    q = torch.randn(batch, seq, heads, head_dim, device="cuda", dtype=torch.bfloat16)
    k = torch.randn(batch, seq, kv_heads, head_dim, device="cuda", dtype=torch.bfloat16)
    v = torch.randn(batch, seq, kv_heads, head_dim, device="cuda", dtype=torch.bfloat16)

    # E4M3 codes and float32 descales of shape (batch, num_heads_k), as FA3 takes them.
    q8, q_descale = sdpa_fp8.quantize(q, num_heads_k=kv_heads)
    k8, k_descale = sdpa_fp8.quantize(k)
    v8, v_descale = sdpa_fp8.quantize(v)

    out = sdpa_fp8.attention(
        q8, k8, v8, q_descale=q_descale, k_descale=k_descale, v_descale=v_descale, causal=True
    )  # [batch, seq, heads, head_dim], bf16

    # torch's attention takes [batch, heads, seq, head_dim]; the last query
    # sees the last key in both (equal lengths).
    expected = F.scaled_dot_product_attention(
        q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True, enable_gqa=True
    ).transpose(1, 2)
    error = (out.float() - expected.float()).norm() / expected.float().norm()
    variant = sdpa_fp8.recommended_variant(q.shape, k.shape, causal=True)
    print(f"out {tuple(out.shape)} {out.dtype}, kernel variant {variant}")
    print(f"relative L2 difference from bf16 torch SDPA: {error.item():.2e} (E4M3 inputs: a few 1e-2)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
