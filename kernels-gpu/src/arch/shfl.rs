//! Warp shuffles and votes.

use core::arch::asm;

/// `shfl.sync.bfly.b32`: returns `value` from lane `lane_id ^ lane_mask`.
///
/// # Safety
/// All 32 lanes of the warp must execute this call together (full mask).
#[inline(always)]
pub unsafe fn shfl_xor_f32(value: f32, lane_mask: u32) -> f32 {
    let out: f32;
    // SAFETY: register-only instruction; convergence is the caller's contract.
    unsafe {
        asm!(
            "shfl.sync.bfly.b32 {out}, {v}, {m}, 0x1f, 0xffffffff;",
            out = out(reg32) out,
            v = in(reg32) value,
            m = in(reg32) lane_mask,
            options(nomem, nostack)
        );
    }
    out
}

/// `vote.sync.all.pred`: whether `predicate` holds on every lane of the warp.
///
/// # Safety
/// All 32 lanes of the warp must execute this call together (full mask).
#[inline(always)]
pub unsafe fn all(predicate: bool) -> bool {
    let out: u32;
    // SAFETY: register-only instruction; convergence is the caller's contract.
    unsafe {
        asm!(
            "{{",
            ".reg .pred p, q;",
            "setp.ne.u32 p, {x}, 0;",
            "vote.sync.all.pred q, p, 0xffffffff;",
            "selp.u32 {out}, 1, 0, q;",
            "}}",
            x = in(reg32) predicate as u32,
            out = out(reg32) out,
            options(nomem, nostack)
        );
    }
    out != 0
}
