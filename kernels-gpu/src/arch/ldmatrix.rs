//! Shared -> register matrix loads (`ldmatrix`, sm_75+).
//!
//! Each 8x8 matrix of 16-bit elements is 8 rows of 16 bytes; lanes
//! `8*i .. 8*i+7` give the row addresses of matrix `i`. Without `.trans`,
//! lane `l` receives row `l / 4`, 16-bit columns `2*(l % 4) .. +1` of each
//! matrix (for 8-bit data: bytes `4*(l % 4) .. +3`, the A/B fragment layout
//! of `mma.m16n8k32`). With `.trans` it receives the transposed matrix.

use core::arch::asm;

/// `ldmatrix.sync.aligned.m8n8.x4.shared.b16`: four 8x8 matrices, one
/// register each.
///
/// # Safety
/// All 32 lanes must execute it together; `row_addr` (this lane's row) must be
/// a 16-byte aligned shared address of 16 readable bytes.
#[inline(always)]
pub unsafe fn load_x4(row_addr: u32) -> [u32; 4] {
    let r: [u32; 4];
    // SAFETY: the caller guarantees convergence and the address.
    unsafe {
        let (a, b, c, d): (u32, u32, u32, u32);
        asm!(
            "ldmatrix.sync.aligned.m8n8.x4.shared.b16 {{{0}, {1}, {2}, {3}}}, [{4}];",
            out(reg32) a, out(reg32) b, out(reg32) c, out(reg32) d,
            in(reg32) row_addr,
            options(readonly, nostack)
        );
        r = [a, b, c, d];
    }
    r
}

/// `ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16`: four 8x8 matrices of
/// 16-bit elements, each transposed on the way.
///
/// # Safety
/// As [`load_x4`].
#[inline(always)]
pub unsafe fn load_x4_trans(row_addr: u32) -> [u32; 4] {
    let r: [u32; 4];
    // SAFETY: the caller guarantees convergence and the address.
    unsafe {
        let (a, b, c, d): (u32, u32, u32, u32);
        asm!(
            "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {{{0}, {1}, {2}, {3}}}, [{4}];",
            out(reg32) a, out(reg32) b, out(reg32) c, out(reg32) d,
            in(reg32) row_addr,
            options(readonly, nostack)
        );
        r = [a, b, c, d];
    }
    r
}
