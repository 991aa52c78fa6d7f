//! The output's element type. Every kernel accumulates in f32 and rounds
//! only when it stores O; the entry points pick the rounding as a type
//! ([`F16`] or [`Bf16`]), so each kernel body is built once per output
//! type (`kernels::OutputDtype`) and the f16 entries are unchanged by the
//! bf16 ones.

use crate::arch::cvt;

/// How a kernel rounds its f32 results into 16-bit output elements.
pub trait OutputFormat {
    /// Two results as one 32-bit word, `lo` in the low half.
    fn pack2(lo: f32, hi: f32) -> u32;
}

/// IEEE half precision (5 exponent bits, 10 mantissa bits; max 65504).
pub struct F16;

/// bfloat16 (8 exponent bits as f32, 7 mantissa bits).
pub struct Bf16;

impl OutputFormat for F16 {
    #[inline(always)]
    fn pack2(lo: f32, hi: f32) -> u32 {
        cvt::pack_f16x2(lo, hi)
    }
}

impl OutputFormat for Bf16 {
    #[inline(always)]
    fn pack2(lo: f32, hi: f32) -> u32 {
        cvt::pack_bf16x2(lo, hi)
    }
}
