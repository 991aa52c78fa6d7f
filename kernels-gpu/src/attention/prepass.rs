//! `kv_tiles`: the prepass of the `wgmma` kernel. Cuts this head's K and V
//! into 64-key tiles laid out exactly as the `wgmma` kernel keeps them in
//! shared memory ([`KvTiles`]): K as E4M3 rows, V transposed and converted
//! to f16 (exact), both in the core-matrix layout, padded with zero keys to
//! whole tiles. The attention kernel then moves each tile with one bulk copy
//! from one thread, instead of every thread copying 16-byte pieces into
//! place in every query block.

use crate::arch::{cvt, grid_dep, sreg};
use crate::layout::RowLayout;
use crate::params::{AttnParams, KvTiles, TILE_KEYS, kv_tiles_threads};

/// 16 bytes (eight f16 keys of a `Vt` row, or 16 E4M3 bytes of a K row),
/// read or written as one 16-byte access (as `[u32; 4]` LLVM knows only
/// 4-byte alignment and splits it into four).
#[repr(C, align(16))]
#[derive(Clone, Copy)]
struct Chunk([u32; 4]);

/// Block `(x, h, b)` writes tile `x` (keys `64x .. 64x + 63`) of head `h`,
/// batch `b`, for K and for `Vt`.
///
/// `Vt`: thread `t` takes V columns `4 (t % (HEAD_DIM / 4)) .. + 3` and keys
/// `8 (t / (HEAD_DIM / 4)) .. + 7`: it reads one 4-byte word from each of
/// its 8 V rows (a warp reads 128 consecutive bytes of a row) and writes 16
/// bytes (8 keys, one core-matrix row) into each of its 4 `Vt` rows.
/// K: the block's threads copy the tile's 16-byte chunks in row order
/// (coalesced reads) to their core-matrix places.
///
/// # Safety
/// `p.k`, `p.v` and `p.kv_tiles` valid for the shapes `p` states
/// (host-validated); the block has `kv_tiles_threads(HEAD_DIM)` threads
/// (`kernels::Prepass::threads`); grid `(padded_keys / 64, heads_kv, batch)`.
#[inline(always)]
pub unsafe fn kv_tiles<const HEAD_DIM: usize>(p: &AttnParams) {
    // First thing, unlike the attention kernels (see `grid_dep`): the
    // prepass is short, and the kernel that depends on it is the attention
    // kernel reading the tiles, which should be resident when it ends.
    grid_dep::launch_dependents();
    let t = sreg::thread_idx_x();
    let threads = kv_tiles_threads(HEAD_DIM as u32);
    let quads = HEAD_DIM as u32 / 4;
    let (col0, group) = (4 * (t % quads), t / quads);
    let tile = sreg::block_idx_x();
    let key0 = tile * TILE_KEYS;
    let head = (sreg::block_idx_z() as u64 * p.heads_kv as u64) + sreg::block_idx_y() as u64;
    let layout = KvTiles::new(HEAD_DIM as u32, p.batch, p.heads_kv, p.seq_kv);
    let head_offset = head * p.seq_kv as u64 * HEAD_DIM as u64;
    let (k, v) = ((p.k + head_offset) as *const u8, (p.v + head_offset) as *const u8);
    let vt_tile = p.kv_tiles + layout.vt_tile(head, tile);
    let k_tile = p.kv_tiles + layout.k_tile(head, tile);
    // SAFETY: before the first read of K, V and write of the scratch (the
    // kernel before this one may write K and V, or still read the scratch).
    unsafe { grid_dep::wait() };

    let words: [u32; 8] = core::array::from_fn(|i| {
        let key = key0 + 8 * group + i as u32;
        // SAFETY: key < seq_kv: a 4-byte aligned word inside this head's V
        // row (HEAD_DIM and col0 are multiples of 4).
        if key < p.seq_kv { unsafe { *(v.add(key as usize * HEAD_DIM + col0 as usize) as *const u32) } } else { 0 }
    });
    let vt_rows = RowLayout::CoreMatrices { row_bytes: 2 * TILE_KEYS };
    for c in 0..4 {
        let code = |i: usize| (words[i] >> (8 * c)) & 0xFF;
        let pairs: [u32; 4] =
            core::array::from_fn(|k| cvt::e4m3x2_to_f16x2((code(2 * k) | (code(2 * k + 1) << 8)) as u16));
        let at = vt_tile + vt_rows.offset(col0 + c, 16 * group) as u64;
        // SAFETY: inside this tile (row < HEAD_DIM, bytes 16 group .. + 16 < 128); 16-byte aligned.
        unsafe { *(at as *mut Chunk) = Chunk(pairs) };
    }

    let k_rows = RowLayout::CoreMatrices { row_bytes: HEAD_DIM as u32 };
    let chunks_per_row = HEAD_DIM as u32 / 16;
    let mut c = t;
    while c < TILE_KEYS * chunks_per_row {
        let (row, byte) = (c / chunks_per_row, 16 * (c % chunks_per_row));
        let key = key0 + row;
        // Padding keys read the last key's row and write zeros (an
        // unconditional 16-byte load keeps the chunk in registers).
        let valid = key < p.seq_kv;
        let src = k.wrapping_add(key.min(p.seq_kv - 1) as usize * HEAD_DIM + byte as usize) as *const Chunk;
        let dst = (k_tile + k_rows.offset(row, byte) as u64) as *mut Chunk;
        // SAFETY: `src` 16 bytes inside this head's K, 16-byte aligned (the
        // buffer is, and HEAD_DIM and byte are multiples of 16); `dst` inside
        // this tile, 16-byte aligned.
        unsafe { *dst = Chunk((*src).0.map(|w| if valid { w } else { 0 })) };
        c += threads;
    }
}
