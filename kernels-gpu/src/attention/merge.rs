//! Merging the partial results of key groups (`split`): every group of
//! warps has run the online softmax over its share of a query block's keys
//! and holds an unnormalized output accumulator for the block's rows; here
//! they combine through shared memory. Each group finishes `1 / SPLITS` of
//! the accumulator tiles (its "slice") for every row:
//!
//! 1. [`MergeArea::publish_stats`]: each group writes its (running maximum,
//!    row sum) per query row.
//! 2. [`MergeArea::publish_partials`]: each thread writes its accumulator
//!    tiles, raw, into its group's exchange slots, indexed by (tile, row
//!    warp, lane): the warps of every group hold the same rows in the same
//!    register layout, so a slot means the same elements to every group.
//!    A group's slots reuse its own K/V tiles, so a group does this as soon
//!    as its own warps are done with them; then one block barrier.
//! 3. [`MergeArea::finish_slice`]: each thread reads every group's
//!    statistics of its two rows and the other groups' tiles of its own
//!    slice, weighs each group by `2^(m_g - max)`
//!    (`softmax::merge_splits`), scales by V's scale over the merged sum and
//!    returns the slice's f32 output for the kernel to store.

use super::online::Rows;
use crate::arch::{math, mbarrier, shfl, smem};
use crate::softmax;

/// Where a block's exchange slots lie: a kernel's policy.
pub trait Exchange {
    /// Whether the slots lie apart from the K/V tiles
    /// (`SplitSmemPlan::new`'s `exchange_apart`).
    fn apart() -> bool;

    /// Before group `done`'s threads publish: waits until the group's
    /// tiles are free for its slots (every copy of the group landed, no
    /// thread of it reads them), where the slots reuse them.
    ///
    /// # Safety
    /// Uniform over the group; `done` is the group's "done" barrier, one
    /// arrival per thread, used once.
    unsafe fn free_tiles(done: u32);
}

/// Each group's slots reuse its own K/V tiles: the least shared memory;
/// a group's warps meet before it publishes.
pub struct InTiles;

/// The slots lie past every group's tiles: no group waits before it
/// publishes (its key loop waited for every copy, and the slots are no
/// tile's).
pub struct Apart;

impl Exchange for InTiles {
    #[inline(always)]
    fn apart() -> bool {
        false
    }

    #[inline(always)]
    unsafe fn free_tiles(done: u32) {
        // SAFETY: forwarded; one arrival per thread, then the phase completes.
        unsafe {
            mbarrier::arrive(done);
            mbarrier::wait(done, 0);
        }
    }
}

impl Exchange for Apart {
    #[inline(always)]
    fn apart() -> bool {
        true
    }

    #[inline(always)]
    unsafe fn free_tiles(_done: u32) {}
}

/// Where the merge lives in a block's dynamic shared memory.
#[derive(Clone, Copy)]
pub struct MergeArea {
    /// Offset of the `(max, sum)` f32 pairs, indexed `[group][row]`.
    pub stats: u32,
    /// Offset of group 0's exchange slots (16 bytes each, indexed
    /// `[tile][row warp][lane]` within a group).
    pub exchange: u32,
    /// Bytes from one group's exchange slots to the next.
    pub group_stride: u32,
    /// Query rows per block.
    pub block_m: u32,
}

impl MergeArea {
    /// Byte offset of the `(max, sum)` entry of `row` for group `split`.
    #[inline(always)]
    const fn stats_at(&self, split: u32, row: u32) -> usize {
        (self.stats + 8 * (split * self.block_m + row)) as usize
    }

    /// Byte offset of the exchange slot of accumulator tile `tile` of
    /// `lane` in row warp `row_warp` of group `split`.
    #[inline(always)]
    const fn exchange_at(&self, split: u32, tile: u32, row_warp: u32, lane: u32) -> usize {
        let row_warps = self.block_m / 16;
        (self.exchange + split * self.group_stride + 16 * ((tile * row_warps + row_warp) * 32 + lane)) as usize
    }

    /// Publishes group `split`'s running maximum and row sum of this
    /// thread's two rows (`local_rows`, block-relative; the quad's partial
    /// sums are added here).
    ///
    /// # Safety
    /// Converged warp; `smem` is the dynamic shared memory base.
    #[inline(always)]
    pub unsafe fn publish_stats(&self, smem: *mut u8, split: u32, local_rows: [u32; 2], rows: &Rows, quad: u32) {
        // Every shuffle before the store that only quad 0 makes: a shuffle
        // after that branch is compiled as a slow warp-collective (ptxas
        // cannot prove the lanes reconverged).
        let mut l = rows.l;
        for x in l.iter_mut() {
            // SAFETY: converged warp; the quad's four partial sums of the row.
            unsafe {
                *x += shfl::shfl_xor_f32(*x, 1);
                *x += shfl::shfl_xor_f32(*x, 2);
            }
        }
        if quad == 0 {
            for h in 0..2 {
                // SAFETY: this group's stats entry of the row (8-byte aligned).
                unsafe { *(smem.add(self.stats_at(split, local_rows[h])) as *mut [f32; 2]) = [rows.m[h].0, l[h]] };
            }
        }
    }

    /// Writes this thread's accumulator tiles into this group's exchange
    /// slots (all of them, its own slice too: the slice is read back by
    /// tile number, and a register array indexed at run time would live in
    /// local memory).
    ///
    /// # Safety
    /// `smem` is the dynamic shared memory base; every thread of group
    /// `split` is past its last read of the group's K/V tiles, which its
    /// exchange slots reuse.
    #[inline(always)]
    pub unsafe fn publish_partials<const O_TILES: usize>(
        &self,
        smem: *mut u8,
        (split, row_warp, lane): (u32, u32, u32),
        o: &[[f32; 4]; O_TILES],
    ) {
        for (t, tile) in o.iter().enumerate() {
            let at = self.exchange_at(split, t as u32, row_warp, lane);
            // SAFETY: this group's slot (16-byte aligned).
            unsafe { *(smem.add(at) as *mut [f32; 4]) = *tile };
        }
    }

    /// The softmax statistics of this thread's two rows over every
    /// group's keys, from the published ones: `(base, sum)` as
    /// `softmax::merge_splits` gives them (base-2 maximum, or 0 for a row
    /// that saw no key, whose sum is 0).
    ///
    /// # Safety
    /// `smem` is the dynamic shared memory base; every group's stats are
    /// published.
    #[inline(always)]
    pub unsafe fn row_stats<const SPLITS: usize>(&self, smem: *const u8, local_rows: [u32; 2]) -> [[f32; 2]; 2] {
        core::array::from_fn(|h| {
            let stats: [[f32; 2]; SPLITS] = core::array::from_fn(|g| {
                // SAFETY: a published stats entry.
                unsafe { *(smem.add(self.stats_at(g as u32, local_rows[h])) as *const [f32; 2]) }
            });
            let (base, sum) = softmax::merge_splits(stats.map(|x| x[0]), stats.map(|x| x[1]), math::exp2);
            [base, sum]
        })
    }

    /// Group `split`'s slice of this thread's two output rows (after every
    /// group published its stats and partials, and a block barrier): tile
    /// `i` is accumulator tile `split * SLICE + i` of the merged, normalized
    /// rows, times V's scale. A row that saw no key at all is exact zeros
    /// (its accumulators may hold 0 x NaN from V, so no product), and so is
    /// every group's part that saw none of the row's keys.
    ///
    /// # Safety
    /// `smem` is the dynamic shared memory base; stats and partials are
    /// published; `SLICE * SPLITS == O_TILES`.
    #[inline(always)]
    pub unsafe fn finish_slice<const O_TILES: usize, const SPLITS: usize, const SLICE: usize>(
        &self,
        smem: *const u8,
        (split, row_warp, lane): (u32, u32, u32),
        local_rows: [u32; 2],
        v_scale: f32,
    ) -> [[f32; 4]; SLICE] {
        // Per row h: each group's weight 2^(m_g - max) times V's scale over
        // the merged sum (0 for a row without keys).
        let weights: [[f32; SPLITS]; 2] = core::array::from_fn(|h| {
            let stats: [[f32; 2]; SPLITS] = core::array::from_fn(|g| {
                // SAFETY: a published stats entry.
                unsafe { *(smem.add(self.stats_at(g as u32, local_rows[h])) as *const [f32; 2]) }
            });
            let m = stats.map(|x| x[0]);
            let (base, sum) = softmax::merge_splits(m, stats.map(|x| x[1]), math::exp2);
            let scale = softmax::output_scale(sum, v_scale, math::rcp);
            m.map(|m_g| math::exp2(m_g - base) * scale)
        });
        // SAFETY: `smem` is the dynamic shared memory base.
        let smem_addr = unsafe { smem::shared_addr(smem) };
        core::array::from_fn(|i| {
            let tile = split * SLICE as u32 + i as u32;
            let mut out = [0f32; 4];
            for (g, w) in (0..SPLITS).map(|g| (g, [weights[0][g], weights[1][g]])) {
                let at = self.exchange_at(g as u32, tile, row_warp, lane) as u32;
                // SAFETY: group g's published slot of this tile (16-byte
                // aligned); one access (see `smem::load_f32x4`).
                let part = unsafe { smem::load_f32x4(smem_addr + at) };
                for e in 0..4 {
                    let w = w[e / 2];
                    out[e] += if w == 0.0 { 0.0 } else { part[e] * w };
                }
            }
            out
        })
    }
}
