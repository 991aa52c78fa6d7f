//! Numeric conversions (`cvt`).

use core::arch::asm;

/// `cvt.rn.f16x2.e4m3x2` (sm_89+): two E4M3 codes (low byte -> low half) to
/// two f16 values, exactly.
#[inline(always)]
pub fn e4m3x2_to_f16x2(pair: u16) -> u32 {
    let out: u32;
    // SAFETY: register-only conversion.
    unsafe {
        asm!(
            "cvt.rn.f16x2.e4m3x2 {d}, {a};",
            d = out(reg32) out,
            a = in(reg16) pair,
            options(pure, nomem, nostack)
        );
    }
    out
}

/// `cvt.rn.f16x2.f32`: packs two f32 as f16 (round to nearest even), `lo`
/// in the low half (PTX puts its first source in the high half).
#[inline(always)]
pub fn pack_f16x2(lo: f32, hi: f32) -> u32 {
    let out: u32;
    // SAFETY: register-only conversion.
    unsafe {
        asm!(
            "cvt.rn.f16x2.f32 {d}, {hi}, {lo};",
            d = out(reg32) out,
            hi = in(reg32) hi,
            lo = in(reg32) lo,
            options(pure, nomem, nostack)
        );
    }
    out
}

/// `cvt.rn.f16.f32`: one f32 to f16 bits (round to nearest even).
#[inline(always)]
pub fn f32_to_f16_bits(x: f32) -> u16 {
    let out: u16;
    // SAFETY: register-only conversion.
    unsafe {
        asm!(
            "cvt.rn.f16.f32 {d}, {a};",
            d = out(reg16) out,
            a = in(reg32) x,
            options(pure, nomem, nostack)
        );
    }
    out
}
