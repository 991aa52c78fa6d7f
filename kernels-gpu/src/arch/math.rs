//! Fast math on the special-function unit.

use core::arch::asm;

/// `ex2.approx.ftz.f32`: 2^x (about 2 ulp; `-inf` gives `+0`).
#[inline(always)]
pub fn exp2(x: f32) -> f32 {
    let out: f32;
    // SAFETY: register-only instruction.
    unsafe {
        asm!(
            "ex2.approx.ftz.f32 {d}, {a};",
            d = out(reg32) out,
            a = in(reg32) x,
            options(pure, nomem, nostack)
        );
    }
    out
}

/// `rcp.approx.ftz.f32`: 1/x (at most 1 ulp off; `inf` gives `+0`, NaN
/// gives NaN). One MUFU instead of the correctly rounded division's
/// ~10 instructions and its slow-path branch.
#[inline(always)]
pub fn rcp(x: f32) -> f32 {
    let out: f32;
    // SAFETY: register-only instruction.
    unsafe {
        asm!(
            "rcp.approx.ftz.f32 {d}, {a};",
            d = out(reg32) out,
            a = in(reg32) x,
            options(pure, nomem, nostack)
        );
    }
    out
}

/// `fma.rn.f32`: `a * b + c` with one rounding (one FFMA instead of an
/// FMUL and an FADD).
#[inline(always)]
pub fn fma(a: f32, b: f32, c: f32) -> f32 {
    let out: f32;
    // SAFETY: register-only instruction.
    unsafe {
        asm!(
            "fma.rn.f32 {d}, {a}, {b}, {c};",
            d = out(reg32) out,
            a = in(reg32) a,
            b = in(reg32) b,
            c = in(reg32) c,
            options(pure, nomem, nostack)
        );
    }
    out
}

/// `lg2.approx.ftz.f32`: log2(x) (about 2 ulp; `+0` gives `-inf`). For
/// the log-sum-exp that `decode` writes, once per row.
#[inline(always)]
pub fn log2(x: f32) -> f32 {
    let out: f32;
    // SAFETY: register-only instruction.
    unsafe {
        asm!(
            "lg2.approx.ftz.f32 {d}, {a};",
            d = out(reg32) out,
            a = in(reg32) x,
            options(pure, nomem, nostack)
        );
    }
    out
}
