//! Fast math on the special-function unit.

use core::arch::asm;

/// Wraps the register-only unary f32 instruction `$op` (`$op d, a;`) as
/// the safe function `$name` with the given doc comment.
macro_rules! unary_f32 {
    ($(#[doc = $doc:literal])* $name:ident = $op:literal) => {
        $(#[doc = $doc])*
        #[inline(always)]
        pub fn $name(x: f32) -> f32 {
            let out: f32;
            // SAFETY: register-only instruction.
            unsafe {
                asm!(
                    concat!($op, " {d}, {a};"),
                    d = out(reg32) out,
                    a = in(reg32) x,
                    options(pure, nomem, nostack)
                );
            }
            out
        }
    };
}

unary_f32! {
    /// `ex2.approx.ftz.f32`: 2^x (about 2 ulp; `-inf` gives `+0`).
    exp2 = "ex2.approx.ftz.f32"
}

unary_f32! {
    /// `rcp.approx.ftz.f32`: 1/x (at most 1 ulp off; `inf` gives `+0`, NaN
    /// gives NaN). One MUFU instead of the correctly rounded division's
    /// ~10 instructions and its slow-path branch.
    rcp = "rcp.approx.ftz.f32"
}

unary_f32! {
    /// `lg2.approx.ftz.f32`: log2(x) (about 2 ulp; `+0` gives `-inf`). For
    /// the log-sum-exp that `decode` writes, once per row.
    log2 = "lg2.approx.ftz.f32"
}

unary_f32! {
    /// `tanh.approx.f32` (sm_75+): tanh(x), one MUFU (relative error
    /// about 2^-11; `+-inf` gives `+-1`, NaN gives NaN). For the softcap of
    /// scores (`window::softcap_input_scale`).
    tanh = "tanh.approx.f32"
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
