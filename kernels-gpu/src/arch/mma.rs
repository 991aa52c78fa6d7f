//! Warp-level tensor-core products (`mma.sync`).
//!
//! Lane `l` has `group = l / 4` and `quad = l % 4`. The f32 accumulator of a
//! 16x8 tile is `[c0, c1, c2, c3]`: `c0, c1` at row `group`, columns
//! `2*quad, 2*quad + 1`; `c2, c3` at row `group + 8`, same columns.

use core::arch::asm;

/// `mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32` (sm_89+):
/// `acc += A(16x32, e4m3) * B(32x8, e4m3)`.
///
/// A: `a[0]` = row `group`, k `4*quad .. +3` (4 bytes, k ascending);
/// `a[1]` = row `group + 8`, same k; `a[2]`, `a[3]` = the same rows at
/// k `16 + 4*quad .. +3`. B ("col", i.e. stored n-major like K itself):
/// `b[0]` = column `group`, k `4*quad .. +3`; `b[1]` = k `16 + 4*quad .. +3`.
///
/// # Safety
/// All 32 lanes must execute it together.
#[inline(always)]
pub unsafe fn m16n8k32_e4m3(acc: &mut [f32; 4], a: [u32; 4], b: [u32; 2]) {
    // SAFETY: register-only; convergence is the caller's contract.
    unsafe {
        asm!(
            "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 \
             {{{0}, {1}, {2}, {3}}}, {{{4}, {5}, {6}, {7}}}, {{{8}, {9}}}, {{{0}, {1}, {2}, {3}}};",
            inout(reg32) acc[0], inout(reg32) acc[1], inout(reg32) acc[2], inout(reg32) acc[3],
            in(reg32) a[0], in(reg32) a[1], in(reg32) a[2], in(reg32) a[3],
            in(reg32) b[0], in(reg32) b[1],
            options(pure, nomem, nostack)
        );
    }
}

/// `mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32` (sm_80+):
/// `acc += A(16x16, f16) * B(16x8, f16)`.
///
/// A (each register two f16, lower column in the low half): `a[0]` = row
/// `group`, k `2*quad .. +1`; `a[1]` = row `group + 8`, same k; `a[2]`, `a[3]`
/// = the same rows at k `8 + 2*quad .. +1` — exactly the f32 accumulator
/// layout of two adjacent 16x8 tiles. B: `b[0]` = column `group`, k
/// `2*quad .. +1`; `b[1]` = k `8 + 2*quad .. +1`.
///
/// # Safety
/// All 32 lanes must execute it together.
#[inline(always)]
pub unsafe fn m16n8k16_f16(acc: &mut [f32; 4], a: [u32; 4], b: [u32; 2]) {
    // SAFETY: register-only; convergence is the caller's contract.
    unsafe {
        asm!(
            "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 \
             {{{0}, {1}, {2}, {3}}}, {{{4}, {5}, {6}, {7}}}, {{{8}, {9}}}, {{{0}, {1}, {2}, {3}}};",
            inout(reg32) acc[0], inout(reg32) acc[1], inout(reg32) acc[2], inout(reg32) acc[3],
            in(reg32) a[0], in(reg32) a[1], in(reg32) a[2], in(reg32) a[3],
            in(reg32) b[0], in(reg32) b[1],
            options(pure, nomem, nostack)
        );
    }
}
