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
