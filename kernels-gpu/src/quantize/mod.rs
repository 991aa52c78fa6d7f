//! The FP8 quantizer: float tensors `[B, H, S, D]` (f16, bf16 or f32) in,
//! E4M3 codes of the same shape and f32 dequantization scales out, each row
//! optionally rotated by the normalised Walsh–Hadamard matrix first.
//!
//! Two kernels per configuration, launched in this order over the same grid
//! ([`grid`]: `ROWS_PER_BLOCK` rows of one (batch, head) per block):
//! - [`Pass::Amax`] folds the largest magnitude of each scale group's
//!   (rotated) values into `amax[group]`, a `u32` holding the f32's bits
//!   (for non-negative floats the bits order as the values, and a NaN sorts
//!   above every number, so one integer `max` both reduces and propagates
//!   NaN). The host zeroes `amax` before.
//! - [`Pass::Encode`] reads its group's amax, takes the scale `amax / 448`
//!   (1.0 for an all-zero group), writes each code as the E4M3 value nearest
//!   to `x * (1 / scale)` (both f32 operations rounded to nearest; ties to
//!   even, saturating at ±448), and the group's scale from its blocks that
//!   start a slice.
//!
//! A scale group is a head (`group = h`, over every batch) or a (batch,
//! head) (`group = b * H + h`): [`QuantizeParams::group_batch_stride`] is 0
//! or `H`. The second pass reads the input again; when a tensor fits in L2,
//! that read hits L2.
//!
//! The host's `sdpa::quant::quantize_as_gpu` is the CPU reference of exactly
//! this arithmetic.

#[cfg(target_arch = "nvptx64")]
mod device;

/// Threads per block of both passes (8 warps).
pub const THREADS: u32 = 256;

/// Rows of one (batch, head) slice that one block covers.
pub const ROWS_PER_BLOCK: u32 = 128;

/// Consecutive elements of a row that one lane holds: a row of `D` values
/// spans `D / 4` lanes (a warp holds two rows at `D = 64`, one at 128).
pub const LANE_ELEMENTS: u32 = 4;

/// The launch parameters of both passes (one `repr(C)` struct shared with
/// the host, as [`crate::params::AttnParams`]).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QuantizeParams {
    /// Device address of the input values `[B, H, S, D]` (f16, bf16 or f32 as
    /// the entry says), aligned to 16 bytes.
    pub input: u64,
    /// Device address of the output codes `[B, H, S, D]`, one byte each.
    pub codes: u64,
    /// Device address of one `u32` per scale group: the bits of the group's
    /// largest magnitude (zeroed by the host before [`Pass::Amax`]).
    pub amax: u64,
    /// Device address of one f32 dequantization scale per scale group
    /// (written by [`Pass::Encode`]).
    pub scales: u64,
    /// Rows per (batch, head): `S`.
    pub seq: u32,
    /// Heads: `H`.
    pub heads: u32,
    /// The scale group of `(b, h)` is `b * group_batch_stride + h`: 0 for
    /// one scale per head, `H` for one per (batch, head).
    pub group_batch_stride: u32,
    /// Zero: keeps the struct free of padding bytes.
    pub reserved: u32,
}

/// The launch grid of both passes for `batch` x `heads` slices of `seq`
/// rows: `(ceil(seq / ROWS_PER_BLOCK), heads, batch)`.
pub const fn grid(batch: u32, heads: u32, seq: u32) -> (u32, u32, u32) {
    (seq.div_ceil(ROWS_PER_BLOCK), heads, batch)
}

/// The input's element type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InputDtype {
    /// IEEE half precision.
    F16,
    /// bfloat16.
    Bf16,
    /// IEEE single precision.
    F32,
}

impl InputDtype {
    /// Bytes per element.
    pub const fn bytes(self) -> usize {
        match self {
            InputDtype::F16 | InputDtype::Bf16 => 2,
            InputDtype::F32 => 4,
        }
    }
}

/// Whether each row is rotated before it is quantized. Given to Q and K
/// alike, the rotation cancels in `Q·Kᵀ` (`(QR)(KR)ᵀ = Q R Rᵀ Kᵀ = Q Kᵀ` for an
/// orthogonal `R`) while it spreads a row's outliers over all `D`
/// dimensions, where E4M3's relative rounding costs the scores less. V is
/// never rotated: its rotation would not cancel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rotation {
    /// The values as they are.
    None,
    /// Each row times the normalised Walsh–Hadamard matrix `H_D / sqrt(D)`:
    /// butterflies of span 1, 2, 4, ..., `D/2` (`(a, b)` at `(i, i + span)`
    /// becomes `(a + b, a - b)`), in f32, then every element times
    /// [`hadamard_norm`]`(D)`.
    Hadamard,
}

/// The f32 nearest to `1 / sqrt(head_dim)` for the head dims the quantizer
/// supports (64 and 128; 0.0 for any other): the Hadamard normalisation.
pub const fn hadamard_norm(head_dim: u32) -> f32 {
    match head_dim {
        64 => 0.125,
        // 1 / sqrt(128) = 0.0883883476..., to the nearest f32
        // (0.0883883461...), by its bits.
        128 => f32::from_bits(0x3DB5_04F3),
        _ => 0.0,
    }
}

/// Which of the two kernels of a configuration (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pass {
    /// The largest magnitude per scale group.
    Amax,
    /// The codes and the scales.
    Encode,
}

/// One quantizer entry point.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QuantizeKernel {
    /// The PTX entry symbol.
    pub entry: &'static str,
    /// The input's element type.
    pub input: InputDtype,
    /// `D`.
    pub head_dim: u32,
    /// The rotation of each row.
    pub rotation: Rotation,
    /// Which pass.
    pub pass: Pass,
}

/// Shorthand for the table below.
const fn kernel(
    entry: &'static str,
    input: InputDtype,
    head_dim: u32,
    rotation: Rotation,
    pass: Pass,
) -> QuantizeKernel {
    QuantizeKernel { entry, input, head_dim, rotation, pass }
}

use InputDtype::{Bf16, F16, F32};
use Pass::{Amax, Encode};
use Rotation::{Hadamard, None as Plain};

/// Every quantizer entry: each input type, head dim (64, 128) and rotation,
/// both passes. Built for both images (plain sm_80+ PTX).
pub const QUANTIZE_KERNELS: [QuantizeKernel; 24] = [
    kernel("sdpa_quantize_amax_f16_d64", F16, 64, Plain, Amax),
    kernel("sdpa_quantize_encode_f16_d64", F16, 64, Plain, Encode),
    kernel("sdpa_quantize_amax_f16_d64_hadamard", F16, 64, Hadamard, Amax),
    kernel("sdpa_quantize_encode_f16_d64_hadamard", F16, 64, Hadamard, Encode),
    kernel("sdpa_quantize_amax_f16_d128", F16, 128, Plain, Amax),
    kernel("sdpa_quantize_encode_f16_d128", F16, 128, Plain, Encode),
    kernel("sdpa_quantize_amax_f16_d128_hadamard", F16, 128, Hadamard, Amax),
    kernel("sdpa_quantize_encode_f16_d128_hadamard", F16, 128, Hadamard, Encode),
    kernel("sdpa_quantize_amax_bf16_d64", Bf16, 64, Plain, Amax),
    kernel("sdpa_quantize_encode_bf16_d64", Bf16, 64, Plain, Encode),
    kernel("sdpa_quantize_amax_bf16_d64_hadamard", Bf16, 64, Hadamard, Amax),
    kernel("sdpa_quantize_encode_bf16_d64_hadamard", Bf16, 64, Hadamard, Encode),
    kernel("sdpa_quantize_amax_bf16_d128", Bf16, 128, Plain, Amax),
    kernel("sdpa_quantize_encode_bf16_d128", Bf16, 128, Plain, Encode),
    kernel("sdpa_quantize_amax_bf16_d128_hadamard", Bf16, 128, Hadamard, Amax),
    kernel("sdpa_quantize_encode_bf16_d128_hadamard", Bf16, 128, Hadamard, Encode),
    kernel("sdpa_quantize_amax_f32_d64", F32, 64, Plain, Amax),
    kernel("sdpa_quantize_encode_f32_d64", F32, 64, Plain, Encode),
    kernel("sdpa_quantize_amax_f32_d64_hadamard", F32, 64, Hadamard, Amax),
    kernel("sdpa_quantize_encode_f32_d64_hadamard", F32, 64, Hadamard, Encode),
    kernel("sdpa_quantize_amax_f32_d128", F32, 128, Plain, Amax),
    kernel("sdpa_quantize_encode_f32_d128", F32, 128, Plain, Encode),
    kernel("sdpa_quantize_amax_f32_d128_hadamard", F32, 128, Hadamard, Amax),
    kernel("sdpa_quantize_encode_f32_d128_hadamard", F32, 128, Hadamard, Encode),
];

/// The entry of `pass` for this input type, head dim and rotation, if built.
pub fn find(input: InputDtype, head_dim: u32, rotation: Rotation, pass: Pass) -> Option<&'static QuantizeKernel> {
    QUANTIZE_KERNELS
        .iter()
        .find(|k| k.input == input && k.head_dim == head_dim && k.rotation == rotation && k.pass == pass)
}
