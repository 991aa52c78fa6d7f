//! `v_transpose`: the prepass of the `wgmma` kernel. Writes V transposed and
//! converted to f16 (exact), `Vt[b][h][d][key]` with keys contiguous and
//! padded with zeros to a multiple of 64, so the attention kernel copies
//! ready-made K-major `P·V` operand tiles instead of transposing V in every
//! query block.

use crate::arch::{cvt, sreg};
use crate::params::{AttnParams, vt_keys};

/// Keys per block of the prepass.
pub const KEYS_PER_BLOCK: u32 = 64;

/// Threads per block of the prepass at `head_dim`: one per (column, group
/// of 8 keys).
pub const fn threads(head_dim: u32) -> u32 {
    head_dim * (KEYS_PER_BLOCK / 8)
}

/// Block `(x, h, b)` transposes keys `64x .. 64x + 63` of head `h`, batch
/// `b`. Thread `t` takes column `t % HEAD_DIM` and keys `8 (t / HEAD_DIM) ..
/// + 7`: a warp reads 32 consecutive bytes of each V row (coalesced) and
/// writes 16 bytes (8 keys of one column) of `Vt`.
///
/// # Safety
/// `p.v` and `p.vt` valid for the shapes `p` states (host-validated); the
/// block has `threads(HEAD_DIM)` threads; grid `(vt_keys / 64, heads_kv, batch)`.
#[inline(always)]
pub unsafe fn v_transpose<const HEAD_DIM: usize>(p: &AttnParams) {
    let t = sreg::thread_idx_x() as usize;
    let (col, group) = (t % HEAD_DIM, t / HEAD_DIM);
    let key0 = sreg::block_idx_x() * KEYS_PER_BLOCK + 8 * group as u32;
    let head = (sreg::block_idx_z() as u64 * p.heads_kv as u64) + sreg::block_idx_y() as u64;
    let padded = vt_keys(p.seq_kv) as u64;
    let v = (p.v + head * p.seq_kv as u64 * HEAD_DIM as u64) as *const u8;
    let vt = (p.vt + ((head * HEAD_DIM as u64 + col as u64) * padded + key0 as u64) * 2) as *mut [u32; 4];
    let code = |i: u32| {
        let key = key0 + i;
        // SAFETY: key < seq_kv and col < HEAD_DIM: inside this head's V.
        if key < p.seq_kv { unsafe { *v.add(key as usize * HEAD_DIM + col) as u16 } } else { 0 }
    };
    let pairs: [u32; 4] =
        core::array::from_fn(|i| cvt::e4m3x2_to_f16x2(code(2 * i as u32) | (code(2 * i as u32 + 1) << 8)));
    // SAFETY: inside this head's Vt row `col`; 16-byte aligned (padded and key0 are multiples of 8 keys).
    unsafe { *vt = pairs };
}
