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

/// `cvt.rn.bf16x2.f32` (sm_80+): packs two f32 as bf16 (round to nearest
/// even), `lo` in the low half (PTX puts its first source in the high half).
#[inline(always)]
pub fn pack_bf16x2(lo: f32, hi: f32) -> u32 {
    let out: u32;
    // SAFETY: register-only conversion.
    unsafe {
        asm!(
            "cvt.rn.bf16x2.f32 {d}, {hi}, {lo};",
            d = out(reg32) out,
            hi = in(reg32) hi,
            lo = in(reg32) lo,
            options(pure, nomem, nostack)
        );
    }
    out
}

/// Four E4M3 codes `[b0, b1, b2, b3]` (low byte first) to two f16 pairs:
/// `[f16x2(b0, b2), f16x2(b1, b3)]` (first code in the low half). One
/// `prmt.b32` (bytes 0, 2, 1, 3) and two `cvt.rn.f16x2.e4m3x2`, exact.
///
/// The use: `ldmatrix.trans` of E4M3 data as 16-bit elements gives a lane
/// the same two adjacent columns of two adjacent rows, `[r0c0, r0c1, r1c0,
/// r1c1]`; this regroups them per column, `(r0c0, r1c0)` and `(r0c1, r1c1)`.
#[inline(always)]
pub fn e4m3x4_to_f16x2_by_column(codes: u32) -> [u32; 2] {
    let (even, odd): (u32, u32);
    // SAFETY: register-only permutation and conversions.
    unsafe {
        asm!(
            "{{",
            ".reg .b32 t;",
            ".reg .b16 lo, hi;",
            "prmt.b32 t, {x}, 0, 0x3120;",
            "mov.b32 {{lo, hi}}, t;",
            "cvt.rn.f16x2.e4m3x2 {even}, lo;",
            "cvt.rn.f16x2.e4m3x2 {odd}, hi;",
            "}}",
            x = in(reg32) codes,
            even = out(reg32) even,
            odd = out(reg32) odd,
            options(pure, nomem, nostack)
        );
    }
    [even, odd]
}

/// `cvt.rn.satfinite.e4m3x2.f32`, twice: packs four f32 as E4M3 bytes
/// (round to nearest even, saturating at +-448), `x[0]` in the lowest
/// byte (PTX puts its first source in the high byte of each pair).
#[inline(always)]
pub fn pack_e4m3x4(x: [f32; 4]) -> u32 {
    let out: u32;
    // SAFETY: register-only conversion.
    unsafe {
        asm!(
            "{{",
            ".reg .b16 lo, hi;",
            "cvt.rn.satfinite.e4m3x2.f32 lo, {x1}, {x0};",
            "cvt.rn.satfinite.e4m3x2.f32 hi, {x3}, {x2};",
            "mov.b32 {out}, {{lo, hi}};",
            "}}",
            out = out(reg32) out,
            x0 = in(reg32) x[0],
            x1 = in(reg32) x[1],
            x2 = in(reg32) x[2],
            x3 = in(reg32) x[3],
            options(pure, nomem, nostack)
        );
    }
    out
}
