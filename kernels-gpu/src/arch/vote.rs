//! Warp votes.

use core::arch::asm;

/// `vote.sync.any.pred`: whether `pred` holds in any lane of the warp (the
/// same answer in every lane).
///
/// # Safety
/// All 32 lanes of the warp must execute this call together (full mask).
#[inline(always)]
pub unsafe fn any(pred: bool) -> bool {
    let out: u32;
    // SAFETY: register-only instruction; convergence is the caller's contract.
    unsafe {
        asm!(
            "{{",
            ".reg .pred p, q;",
            "setp.ne.u32 p, {x}, 0;",
            "vote.sync.any.pred q, p, 0xffffffff;",
            "selp.u32 {out}, 1, 0, q;",
            "}}",
            x = in(reg32) pred as u32,
            out = out(reg32) out,
            options(nomem, nostack)
        );
    }
    out != 0
}
