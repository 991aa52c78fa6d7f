//! `kv_tiles`: the prepass of the `wgmma` kernel. Cuts this head's V into
//! 64-key tiles laid out exactly as the `wgmma` kernel keeps them in shared
//! memory ([`KvTiles`]): V transposed, in the [`VtForm`] of the kernel's
//! P·V (f16, or for `wgmma-fp8pv` V's own E4M3 bytes in
//! `layout::fp8_pv_byte`'s key order), in the core-matrix layout, padded
//! with zero keys to whole tiles. The attention kernel then moves each
//! tile with one bulk copy from one thread, instead of every thread
//! copying 16-byte pieces into place in every query block. (K it copies
//! from the input by tensor copies.)

use super::block::find_packed_sequence;
use crate::arch::{bar, bulk, cvt, fence, grid_dep, mbarrier, smem, sreg};
use crate::layout::RowLayout;
use crate::params::{AttnParams, KvTiles, PackedRows, TILE_KEYS};
use crate::schedule;
use crate::tiles::KvTilesSmemPlan;

/// How `Vt` is stored: the element type and key order of its rows, which
/// the `wgmma` kernel's P·V reads (`wgmma::PvForm`, whose forms implement
/// it).
pub trait VtForm {
    /// Whether `Vt` holds V's E4M3 bytes (else V converted to f16), as the
    /// layout functions shared with the host take it (`KvTiles::new`,
    /// `tiles::WgmmaSmemPlan::new`).
    fn e4m3() -> bool;
}

/// 16 bytes (eight f16 keys of a `Vt` row, or 16 E4M3 keys),
/// read or written as one 16-byte access (as `[u32; 4]` LLVM knows only
/// 4-byte alignment and splits it into four).
#[repr(C, align(16))]
#[derive(Clone, Copy)]
struct Chunk([u32; 4]);

/// One thread's part of a tile's `Vt`: which V bytes it reads and where in
/// the `Vt` image it writes them. Each thread moves 32 bytes, so the
/// `kv_tiles_threads(HEAD_DIM)` threads cover the tile's `64 * HEAD_DIM`.
///
/// - f16 `Vt`: 4 columns (`col0 ..`) of 8 keys (`8 group ..`): one 4-byte
///   word from each of the 8 V rows; each column becomes 16 bytes of f16
///   keys, one core-matrix row.
/// - E4M3 `Vt` ([`VtForm::e4m3`]): 2 columns of 16 keys (`16 group ..`):
///   two bytes from each of the 16 V rows, packed two keys to a word; in
///   [`fp8_pv_byte`](crate::layout::fp8_pv_byte)'s order a column's 16
///   keys are the 16 bytes at row byte `16 group`, one core-matrix row as
///   well.
///
/// A warp's lanes hold adjacent columns, whose `Vt` rows lie in the same
/// 16-byte slot of every core matrix; each lane takes its columns in its
/// own order (`first_column`), so that one store instruction writes 8
/// different slots (the most one shared-memory wavefront serves) instead
/// of 2 (f16) or 4 (E4M3).
#[derive(Clone, Copy)]
struct VtPart {
    /// The thread's first V column (`Vt` row).
    col0: u32,
    /// The thread's keys: `8 group ..` (f16) or `16 group ..` (E4M3).
    group: u32,
    /// The column the thread writes first (the rest follow cyclically).
    first_column: u32,
}

impl VtPart {
    /// Thread `t`'s part at head dimension `d`, for `Vt`'s form.
    #[inline(always)]
    fn of<Vt: VtForm>(d: u32, t: u32) -> VtPart {
        let lane = t % 32;
        if Vt::e4m3() {
            // Lanes 4l .. 4l + 3 write rows 2 (4l + i) + c: slot 2i + c of
            // their core matrix, so column c = l % 2 first fills the odd slots
            // where the other lanes fill the even ones.
            let pairs = d / 2;
            VtPart { col0: 2 * (t % pairs), group: t / pairs, first_column: (lane / 4) % 2 }
        } else {
            // Lane l writes row 4l + c: slot 4 (l % 2) + c, so lanes 2m, 2m + 1
            // starting at column m % 4 fill all 8 slots.
            let quads = d / 4;
            VtPart { col0: 4 * (t % quads), group: t / quads, first_column: (lane / 2) % 4 }
        }
    }

    /// The thread's V bytes from the `d`-byte rows at `v_rows` in shared
    /// memory, zero for keys at or past `keys`. f16 form: word `i` is key
    /// `8 group + i`'s 4 columns; E4M3 form: word `i` holds the 2 columns
    /// of keys `16 group + 2i` (low half) and `+ 1` (high half).
    ///
    /// # Safety
    /// The tile's 64 V rows of `d` bytes lie at `v_rows` (rows past `keys`
    /// are read, stale, and replaced, so that the array stays in
    /// registers).
    #[inline(always)]
    unsafe fn read<Vt: VtForm>(&self, v_rows: *const u8, d: u32, keys: u32) -> [u32; 8] {
        core::array::from_fn(|i| {
            if Vt::e4m3() {
                let half = |key: u32| {
                    // SAFETY: a 2-byte aligned pair of a V row (col0 is even).
                    let pair = unsafe { *(v_rows.add((key * d + self.col0) as usize) as *const u16) } as u32;
                    if key < keys { pair } else { 0 }
                };
                let key = 16 * self.group + 2 * i as u32;
                half(key) | half(key + 1) << 16
            } else {
                let key = 8 * self.group + i as u32;
                // SAFETY: a 4-byte aligned word of a V row (col0 % 4 == 0).
                let word = unsafe { *(v_rows.add((key * d + self.col0) as usize) as *const u32) };
                if key < keys { word } else { 0 }
            }
        })
    }

    /// Writes the thread's `Vt` rows from `words` ([`VtPart::read`]) into
    /// the image at `image` (rows laid out as `vt_rows`).
    ///
    /// # Safety
    /// The image lies at `image`, and no thread still reads what these
    /// stores overwrite.
    #[inline(always)]
    unsafe fn write<Vt: VtForm>(&self, image: *mut u8, vt_rows: RowLayout, words: &[u32; 8]) {
        // (The two forms written out here: as a method of `VtForm`, the
        // store compiled to other PTX.)
        if Vt::e4m3() {
            for step in 0..2 {
                let c = (self.first_column + step) % 2;
                // Key 16 group + k's code in column c.
                let code = |k: usize| (words[k / 2] >> (16 * (k % 2) as u32 + 8 * c)) & 0xFF;
                // Row byte 4q + 2a + e holds key 16 group + 8a + 2q + e
                // (`fp8_pv_byte`).
                let word =
                    |q: usize| code(2 * q) | code(2 * q + 1) << 8 | code(8 + 2 * q) << 16 | code(9 + 2 * q) << 24;
                let at = vt_rows.offset(self.col0 + c, 16 * self.group);
                // SAFETY: inside the `Vt` image (row < d, bytes 16 group .. + 16 <= 64); 16-byte aligned.
                unsafe { *(image.add(at as usize) as *mut Chunk) = Chunk(core::array::from_fn(word)) };
            }
        } else {
            for step in 0..4 {
                let c = (self.first_column + step) % 4;
                let code = |i: usize| (words[i] >> (8 * c)) & 0xFF;
                let pair = |k: usize| (code(2 * k) | (code(2 * k + 1) << 8)) as u16;
                let pairs: [u32; 4] = core::array::from_fn(|k| cvt::e4m3x2_to_f16x2(pair(k)));
                let at = vt_rows.offset(self.col0 + c, 16 * self.group);
                // SAFETY: inside the `Vt` image (row < d, bytes 16 group .. + 16 <= 128); 16-byte aligned.
                unsafe { *(image.add(at as usize) as *mut Chunk) = Chunk(pairs) };
            }
        }
    }
}

/// Block `(x, h, b)` writes `Vt` tile `x` (keys `64x .. 64x + 63`) of head
/// `h`, batch `b`, through shared memory ([`KvTilesSmemPlan`]); only thread
/// 0 touches global memory, with bulk copies (every thread loading and
/// storing its own pieces measured bound by the global load/store queue
/// and half-written sectors, see lab/):
///
/// 1. thread 0 copies the tile's V rows in (the keys below `seq_kv`; the
///    rest read as zero);
/// 2. each thread reads its [`VtPart`] of the V rows and, once every
///    thread has read its inputs, writes it into the `Vt` image over the
///    rows: f16 keys, or with E4M3 `Vt` ([`VtForm::e4m3`]) the keys' own
///    bytes in [`fp8_pv_byte`](crate::layout::fp8_pv_byte)'s order;
/// 3. thread 0 copies the image out.
///
/// # Safety
/// `p.k`, `p.v` and `p.kv_tiles` valid for the shapes `p` states
/// (host-validated); the block has `kv_tiles_threads(HEAD_DIM)` threads
/// (`kernels::Prepass::threads`) and `KvTilesSmemPlan::new(HEAD_DIM).total`
/// bytes of dynamic shared memory; grid `(padded_keys / 64, heads_kv,
/// batch)`, or for a packed batch `(KvTiles::packed(..).tiles_per_head,
/// heads_kv, 1)`.
#[inline(always)]
pub unsafe fn kv_tiles<const HEAD_DIM: usize, Vt: VtForm>(p: &AttnParams) {
    // First thing, unlike the attention kernels (see `grid_dep`): the
    // prepass is short, and the kernel that depends on it is the attention
    // kernel reading the tiles, which should be resident when it ends.
    grid_dep::launch_dependents();
    let t = sreg::thread_idx_x();
    let d = HEAD_DIM as u32;
    let plan = KvTilesSmemPlan::new(d);
    let smem_ptr = smem::dynamic_smem_base();
    // SAFETY: the dynamic shared memory base.
    let smem_base = unsafe { smem::shared_addr(smem_ptr) };
    let barrier = smem_base + plan.barrier;
    let (x, kv_head, batch) = sreg::block_idx();
    let layout = KvTiles::of(p, d, Vt::e4m3());
    // The head's keys: `[batch, heads_kv, seq_kv, D]` rows, or a packed
    // sequence's rows `kv_strides.row` bytes apart (which this block reads
    // one bulk copy a row, spread over the threads). Packed, block `x` of
    // `KvTiles::packed`'s tiles finds its sequence in the prefix sums, the tile
    // its own index; a tile between two sequences' has no keys. Packed
    // without prefix sums (sequences of equal lengths), blocks run as for
    // `[batch, heads_kv, seq_kv, D]` and place their tiles as packed.
    let (head, rows_at, row_stride, seq_kv, tile, dst_tile) = if p.cu_seqlens_k != 0 {
        let cu_k = p.cu_seqlens_k as *const u32;
        // SAFETY: entries `0 ..= batch` of the prefix sums (host-validated
        // length), written before the kernel before this one; every warp
        // converged.
        let (batch, rows) = unsafe {
            grid_dep::wait();
            let batch = find_packed_sequence(|b| *cu_k.add(b as usize), p.batch, TILE_KEYS, x);
            (batch, PackedRows::of(p, [0, 0], [*cu_k.add(batch as usize), *cu_k.add(batch as usize + 1)]))
        };
        let first = p.kv_strides.offset(rows.kv_row0, kv_head);
        let tile = x.wrapping_sub(KvTiles::first_packed_tile(rows.kv_row0, batch));
        (kv_head as u64, first, p.kv_strides.row, rows.seq_kv, tile.min(schedule::blocks(rows.seq_kv, TILE_KEYS)), x)
    } else if p.packed_keys != 0 {
        let rows = PackedRows::uniform(p, batch);
        let first = p.kv_strides.offset(rows.kv_row0, kv_head);
        (kv_head as u64, first, p.kv_strides.row, rows.seq_kv, x, KvTiles::first_packed_tile(rows.kv_row0, batch) + x)
    } else {
        let head = batch as u64 * p.heads_kv as u64 + kv_head as u64;
        (head, head * p.seq_kv as u64 * d as u64, d, p.seq_kv, x, x)
    };
    let key0 = tile * TILE_KEYS;
    if key0 >= seq_kv {
        // Packed, a tile between two sequences' tiles.
        return;
    }
    let keys = (seq_kv - key0).min(TILE_KEYS);
    let v = (p.v + rows_at + key0 as u64 * row_stride as u64) as *const u8;

    // 1. The V rows. SAFETY: thread 0 initializes the barrier and sets the
    // bytes to expect before a block barrier; the copies are issued after
    // the kernel before this one is done with V and the scratch
    // (`grid_dep::wait`); `keys` rows of `d` bytes from key0 lie inside
    // this head's V, and `d` is a multiple of 16.
    unsafe {
        if t == 0 {
            mbarrier::init(barrier, 1);
            fence::proxy_async_shared();
        }
        bar::sync_threads();
        if t == 0 {
            grid_dep::wait();
            mbarrier::arrive_expect_tx(barrier, keys * d);
            if row_stride == d {
                bulk::copy_to_shared(smem_base + plan.v_rows, v, keys * d, barrier);
            }
        }
        if row_stride != d {
            // (After the expected bytes are set: a copy completing first
            // must not complete the phase.)
            bar::sync_threads();
            if t < keys {
                grid_dep::wait();
                let from = t as usize * row_stride as usize;
                bulk::copy_to_shared(smem_base + plan.v_rows + t * d, v.wrapping_add(from), d, barrier);
            }
        }
        mbarrier::wait(barrier, 0);
    }

    // 2. Read everything this thread needs (rows past `keys` are zeros)...
    let vt_part = VtPart::of::<Vt>(d, t);
    // SAFETY: the landed V rows.
    let words = unsafe { vt_part.read::<Vt>(smem_ptr.wrapping_add(plan.v_rows as usize), d, keys) };
    // ... then, once every thread has, write the image.
    // SAFETY: every thread of the block.
    unsafe { bar::sync_threads() };
    let vt_rows = RowLayout::CoreMatrices { row_bytes: layout.vt_key_bytes * TILE_KEYS };
    // SAFETY: the `Vt` image over the rows, every thread's reads done.
    unsafe { vt_part.write::<Vt>(smem_ptr.wrapping_add(plan.image as usize), vt_rows, &words) };

    // 3. Out. SAFETY: every thread's image writes are fenced for the async
    // proxy and behind the block barrier; the image is the scratch's tile
    // size; thread 0 waits for the copy before the block exits.
    unsafe {
        fence::proxy_async_shared();
        bar::sync_threads();
        if t == 0 {
            let scratch = p.kv_tiles as *mut u8;
            let vt_dst = scratch.wrapping_add(layout.vt_tile(head, dst_tile) as usize);
            bulk::copy_to_global(vt_dst, smem_base + plan.image, layout.vt_tile_bytes());
            bulk::commit_group();
            bulk::wait_groups();
        }
    }
}
