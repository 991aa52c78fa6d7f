//! The kernel argument block, shared bit for bit by host and device.

use crate::schedule::FastDiv;

/// Everything a forward kernel needs, passed by value as one kernel parameter.
///
/// Tensors are contiguous row-major: Q `[batch, heads_q, seq_q, HEAD_DIM]`,
/// K and V `[batch, heads_kv, seq_kv, HEAD_DIM]` as E4M3 bytes, O
/// `[batch, heads_q, seq_q, HEAD_DIM]` as f16 bits. The scales are device
/// pointers to f32 arrays: `q_scale[heads_q]`, `k_scale[heads_kv]`,
/// `v_scale[heads_kv]` (real value = fp8 value * scale).
/// The host validates every field before a launch; the kernels trust them.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct AttnParams {
    /// Device address of Q (E4M3).
    pub q: u64,
    /// Device address of K (E4M3).
    pub k: u64,
    /// Device address of V (E4M3).
    pub v: u64,
    /// Device address of O (f16).
    pub o: u64,
    /// Device address of the per-head Q dequantization scales (f32).
    pub q_scale: u64,
    /// Device address of the per-head K dequantization scales (f32).
    pub k_scale: u64,
    /// Device address of the per-head V dequantization scales (f32).
    pub v_scale: u64,
    /// Device address of a scratch `Vt` `[batch, heads_kv, HEAD_DIM,
    /// vt_keys(seq_kv)]` (f16): V transposed, written by the `v_transpose`
    /// prepass for the kernels that read it (0 for the others).
    pub vt: u64,
    /// Batch size B.
    pub batch: u32,
    /// Query heads Hq.
    pub heads_q: u32,
    /// Key/value heads Hkv (`heads_q % heads_kv == 0`).
    pub heads_kv: u32,
    /// Query length Sq.
    pub seq_q: u32,
    /// Key/value length Skv.
    pub seq_kv: u32,
    /// The softmax scale applied to Q·K^T (before the dequantization scales).
    pub softmax_scale: f32,
    /// 1 for causal (bottom-right aligned) masking, 0 for none.
    pub causal: u32,
    /// 1 when every head's largest possible score allows the fused exponent
    /// (`softmax::fused_exponent_ok`), else 0; the `wgmma` entries run their
    /// fused or their unfused body on it (the other kernels ignore it).
    pub fused_exponent: u32,
    /// Query head -> key/value head: `schedule::kv_group(heads_q, heads_kv)`.
    pub kv_group: FastDiv,
}

/// Keys per row of the `Vt` scratch: `seq_kv` rounded up to 64, so whole
/// 64-key tiles can be read without bounds checks (the padding is zeros).
#[inline(always)]
pub const fn vt_keys(seq_kv: u32) -> u32 {
    seq_kv.div_ceil(64) * 64
}
