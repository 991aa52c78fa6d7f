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

/// `shfl.sync.idx.b32` from lane 0: lane 0's `value` in every lane.
///
/// # Safety
/// All 32 lanes of the warp must execute this call together (full mask).
#[inline(always)]
pub unsafe fn broadcast_lane0_u32(value: u32) -> u32 {
    let out: u32;
    // SAFETY: register-only instruction; convergence is the caller's contract.
    unsafe {
        asm!(
            "shfl.sync.idx.b32 {o}, {v}, 0, 0x1f, 0xffffffff;",
            o = out(reg32) out,
            v = in(reg32) value,
            options(nomem, nostack)
        );
    }
    out
}

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
            "{{ .reg .pred p, q; setp.ne.u32 p, {v}, 0; vote.sync.any.pred q, p, 0xffffffff; selp.u32 {out}, 1, 0, q; }}",
            out = out(reg32) out,
            v = in(reg32) pred as u32,
            options(nomem, nostack)
        );
    }
    out != 0
}

/// `vote.sync.ballot.b32`: the lanes in which `pred` holds, lane `i` as
/// bit `i` (the same mask in every lane).
///
/// # Safety
/// All 32 lanes of the warp must execute this call together (full mask).
#[inline(always)]
pub unsafe fn ballot(pred: bool) -> u32 {
    let out: u32;
    // SAFETY: register-only instruction; convergence is the caller's contract.
    unsafe {
        asm!(
            "{{ .reg .pred p; setp.ne.u32 p, {v}, 0; vote.sync.ballot.b32 {out}, p, 0xffffffff; }}",
            out = out(reg32) out,
            v = in(reg32) pred as u32,
            options(nomem, nostack)
        );
    }
    out
}

/// `redux.sync.min.u32` over the whole warp: the smallest `x` of the 32
/// lanes, in every lane. Given a value that is already the same in every
/// lane (a sequence index found by [`ballot`], a length loaded by every
/// lane from one address), it returns that value marked as warp-uniform:
/// `ptxas` places the result in a uniform register (`REDUX` writes one on
/// sm_80+), so the addresses, key ranges and loop bounds derived from it
/// stay on the uniform datapath instead of being recomputed per lane, with
/// convergence barriers around every branch they decide.
///
/// # Safety
/// All 32 lanes of the warp must execute this call together (full mask).
#[inline(always)]
pub unsafe fn uniform(x: u32) -> u32 {
    let out: u32;
    // SAFETY: register-only instruction; convergence is the caller's contract.
    unsafe {
        asm!(
            "redux.sync.min.u32 {out}, {x}, 0xffffffff;",
            out = out(reg32) out,
            x = in(reg32) x,
            options(nomem, nostack, pure)
        );
    }
    out
}
