//! The kernel argument block, shared bit for bit by host and device.

use crate::schedule::FastDiv;

/// Everything a forward kernel needs, passed by value as one kernel parameter.
///
/// Tensors are contiguous row-major: Q `[batch, heads_q, seq_q, HEAD_DIM]`,
/// K and V `[batch, heads_kv, seq_kv, HEAD_DIM]` as E4M3 bytes, O
/// `[batch, heads_q, seq_q, HEAD_DIM]` as f16 bits. The dequantization
/// scales are one f32 array: `heads_q` Q scales, then `heads_kv` K scales,
/// then `heads_kv` V scales (real value = fp8 value * scale).
/// The host validates every field before a launch; the kernels trust them.
///
/// Layout: a kernel reads its parameters through the constant cache, whose
/// 64-byte lines start cold at every launch, and a warp waits out each miss
/// in program order (ncu, H200 run 70: two misses in a row, ~8% of
/// `split`'s warp samples at (2,8,256,64); results/STAGES.md stages 48-49).
/// Parameters start at `c[0x0][0x210]` (sm_80 and later), in the line that
/// also holds the global-memory descriptor every load needs
/// (`c[0x0][0x208]`), so the first 48 bytes, `q` to `kv_group_multiplier`,
/// hold everything a block reads before its first copies, the scale loads
/// included (which must precede the copies: stage 48); the rest is read
/// later.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct AttnParams {
    /// Device address of Q (E4M3).
    pub q: u64,
    /// Device address of K (E4M3).
    pub k: u64,
    /// Device address of V (E4M3).
    pub v: u64,
    /// Device address of the dequantization scales (f32, see above).
    pub scales: u64,
    /// The multiplier of that division.
    pub kv_group_multiplier: u32,
    /// Query length Sq.
    pub seq_q: u32,
    /// Key/value length Skv.
    pub seq_kv: u32,
    /// Query heads Hq (the grid limit keeps them below 2^16).
    pub heads_q: u16,
    /// The shift of the query head -> key/value head division
    /// ([`AttnParams::kv_group`]).
    pub kv_group_shift: u8,
    /// 1 for causal (bottom-right aligned) masking, 0 for none.
    pub causal: u8,
    /// Device address of O (f16).
    pub o: u64,
    /// Device address of a scratch `Vt` `[batch, heads_kv, HEAD_DIM,
    /// vt_keys(seq_kv)]` (f16): V transposed, written by the `v_transpose`
    /// prepass for the kernels that read it (0 for the others).
    pub vt: u64,
    /// Batch size B.
    pub batch: u32,
    /// The softmax scale applied to Q·K^T (before the dequantization scales).
    pub softmax_scale: f32,
    /// 1 when every head's largest possible score allows the fused exponent
    /// (`softmax::fused_exponent_ok`), else 0; the `wgmma` entries run their
    /// fused or their unfused body on it (the other kernels ignore it).
    pub fused_exponent: u32,
}

impl AttnParams {
    /// The query head -> key/value head division.
    #[inline(always)]
    pub const fn kv_group(&self) -> FastDiv {
        FastDiv { multiplier: self.kv_group_multiplier, shift: self.kv_group_shift as u32 }
    }

    /// Key/value heads Hkv: `heads_q / (heads_q / heads_kv)`.
    #[inline(always)]
    pub const fn heads_kv(&self) -> u32 {
        self.kv_group().div(self.heads_q as u32)
    }
}

const _: () = assert!(
    0x210 + core::mem::offset_of!(AttnParams, o) == 0x240,
    "q .. kv_group_multiplier fill the rest of the descriptor's line"
);

/// Keys per row of the `Vt` scratch: `seq_kv` rounded up to 64, so whole
/// 64-key tiles can be read without bounds checks (the padding is zeros).
#[inline(always)]
pub const fn vt_keys(seq_kv: u32) -> u32 {
    seq_kv.div_ceil(64) * 64
}
