//! `v_transpose`: the prepass of the `wgmma` kernel. Writes V transposed and
//! converted to f16 (exact), `Vt[b][h][d][key]` with keys contiguous and
//! padded with zeros to a multiple of 64, so the attention kernel copies
//! ready-made K-major `P·V` operand tiles instead of transposing V in every
//! query block.

use crate::arch::{cvt, grid_dep, sreg};
use crate::params::{AttnParams, vt_keys};

/// Eight keys of a `Vt` row (f16 pairs), written as one 16-byte store (as
/// `[u32; 4]` LLVM knows only 4-byte alignment and writes four words).
#[repr(C, align(16))]
struct EightKeys([u32; 4]);

/// Keys per block of the prepass.
pub const KEYS_PER_BLOCK: u32 = 64;

/// Block `(x, h, b)` transposes keys `64x .. 64x + 63` of head `h`, batch
/// `b`. Thread `t` takes columns `4 (t % (HEAD_DIM / 4)) .. + 3` and keys
/// `8 (t / (HEAD_DIM / 4)) .. + 7`: it reads one 4-byte word from each of
/// its 8 V rows (a warp reads 128 consecutive bytes of a row) and writes 16
/// bytes (8 keys) into each of its 4 `Vt` rows.
///
/// # Safety
/// `p.v` and `p.vt` valid for the shapes `p` states (host-validated); the
/// block has `HEAD_DIM / 4 * 8` threads (`kernels::Prepass::threads`); grid `(vt_keys / 64, heads_kv, batch)`.
#[inline(always)]
pub unsafe fn v_transpose<const HEAD_DIM: usize>(p: &AttnParams) {
    // First thing, unlike the attention kernels (see `grid_dep`): the
    // prepass is short, and the kernel that depends on it is the attention
    // kernel reading Vt, which should be resident when it ends.
    grid_dep::launch_dependents();
    let t = sreg::thread_idx_x() as usize;
    let quads = HEAD_DIM / 4;
    let (col0, group) = (4 * (t % quads), t / quads);
    let key0 = sreg::block_idx_x() * KEYS_PER_BLOCK + 8 * group as u32;
    let head = (sreg::block_idx_z() as u64 * p.heads_kv as u64) + sreg::block_idx_y() as u64;
    let padded = vt_keys(p.seq_kv) as u64;
    let v = (p.v + head * p.seq_kv as u64 * HEAD_DIM as u64) as *const u8;
    // SAFETY: before the first read of V and write of Vt (the kernel before
    // this one may write V, or still read Vt).
    unsafe { grid_dep::wait() };
    let words: [u32; 8] = core::array::from_fn(|i| {
        let key = key0 + i as u32;
        // SAFETY: key < seq_kv: a 4-byte aligned word inside this head's V row (HEAD_DIM and col0 are multiples of 4).
        if key < p.seq_kv { unsafe { *(v.add(key as usize * HEAD_DIM + col0) as *const u32) } } else { 0 }
    });
    for c in 0..4 {
        let code = |i: usize| (words[i] >> (8 * c)) & 0xFF;
        let pairs: [u32; 4] =
            core::array::from_fn(|k| cvt::e4m3x2_to_f16x2((code(2 * k) | (code(2 * k + 1) << 8)) as u16));
        let row = head * HEAD_DIM as u64 + (col0 + c) as u64;
        let vt = (p.vt + (row * padded + key0 as u64) * 2) as *mut EightKeys;
        // SAFETY: inside this head's Vt row; 16-byte aligned (padded and key0 are multiples of 8 keys).
        unsafe { *vt = EightKeys(pairs) };
    }
}
