//! The FP8 E4M3 codec (OCP "e4m3fn"): 1 sign bit, 4 exponent bits (bias 7),
//! 3 mantissa bits; no infinities; `0x7F`/`0xFF` are NaN; largest finite
//! magnitude 448; smallest subnormal 2^-9.
//!
//! Decoding is exact in f32 (and in f16): every E4M3 value is representable.
//! The host's reference and tests decode with it.

/// Largest finite E4M3 magnitude.
pub const E4M3_MAX: f32 = 448.0;

/// Returns `true` when `bits` is one of the two E4M3 NaN codes.
#[inline(always)]
pub const fn e4m3_is_nan(bits: u8) -> bool {
    bits & 0x7F == 0x7F
}

/// Decodes one E4M3 code to f32 exactly (NaN codes give a quiet NaN).
#[inline(always)]
pub fn e4m3_to_f32(bits: u8) -> f32 {
    let sign = ((bits as u32) & 0x80) << 24;
    let exponent = ((bits >> 3) & 0x0F) as u32;
    let mantissa = (bits & 0x07) as u32;
    let magnitude = if e4m3_is_nan(bits) {
        0x7FC0_0000
    } else if exponent == 0 {
        // Subnormal: mantissa * 2^-9, exact as an f32 product of small integers.
        (mantissa as f32 * (1.0 / 512.0)).to_bits()
    } else {
        // Normal: rebias 7 -> 127 and widen the mantissa 3 -> 23 bits.
        ((exponent + 120) << 23) | (mantissa << 20)
    };
    f32::from_bits(sign | magnitude)
}
