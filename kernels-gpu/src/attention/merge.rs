//! Merging the partial results of key groups (`split`): every group of
//! warps has run the online softmax over its share of a query block's keys
//! and holds an unnormalized output accumulator for the block's rows; here
//! they combine through shared memory. Each group finishes `1 / SPLITS` of
//! the accumulator tiles (its "slice") for every row:
//!
//! 1. [`MergeArea::publish_stats`]: each group writes its (running maximum,
//!    row sum) per query row.
//! 2. [`MergeArea::publish_partials`]: each thread writes its accumulator
//!    tiles, divided by its group's row sums and packed as f16, into its
//!    group's exchange slots, indexed by (tile pair, row warp, lane): the
//!    warps of every group hold the same rows in the same register layout,
//!    so a slot means the same elements to every group. A group's slots
//!    reuse its own K/V tiles, so a group does this as soon as its own
//!    warps are done with them; then one block barrier.
//! 3. [`MergeArea::finish_slice`]: each thread reads every group's
//!    statistics of its two rows and every group's tiles of its own slice,
//!    weighs each group by its share of the merged row sum,
//!    `l_g 2^(m_g - max) / sum` (`softmax::merge_splits`), scales by V's
//!    scale and returns the slice's f32 output for the kernel to store.
//!
//! The exchange is bound by the shared-memory pipe (results/STAGES.md
//! stages 43-44): f16 slots move half the bytes of f32 ones, and each slot
//! moves as one 16-byte access.

use super::online::Rows;
use crate::arch::{cvt, math, shfl, smem};
use crate::softmax;

/// One exchange slot: two accumulator tiles of one lane as f16 pairs
/// `[even tile row h=0, even h=1, odd h=0, odd h=1]`, written as one
/// 16-byte access.
#[repr(C, align(16))]
struct Slot([u32; 4]);

/// Where the merge lives in a block's dynamic shared memory.
#[derive(Clone, Copy)]
pub struct MergeArea {
    /// Offset of the `(max, sum)` f32 pairs, indexed `[group][row]`.
    pub stats: u32,
    /// Offset of group 0's exchange slots (16 bytes each: two accumulator
    /// tiles as f16, indexed `[tile pair][row warp][lane]` within a group).
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

    /// Byte offset of the exchange slot of accumulator tiles `2 pair` and
    /// `2 pair + 1` of `lane` in row warp `row_warp` of group `split`.
    #[inline(always)]
    const fn exchange_at(&self, split: u32, pair: u32, row_warp: u32, lane: u32) -> usize {
        let row_warps = self.block_m / 16;
        (self.exchange + split * self.group_stride + 16 * ((pair * row_warps + row_warp) * 32 + lane)) as usize
    }

    /// Publishes group `split`'s running maximum and row sum of this
    /// thread's two rows (`local_rows`, block-relative; the quad's partial
    /// sums are added here), and returns those two row sums.
    ///
    /// # Safety
    /// Converged warp; `smem` is the dynamic shared memory base.
    #[inline(always)]
    pub unsafe fn publish_stats(
        &self,
        smem: *mut u8,
        split: u32,
        local_rows: [u32; 2],
        rows: &Rows,
        quad: u32,
    ) -> [f32; 2] {
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
        l
    }

    /// Writes this thread's accumulator tiles, divided by the group's row
    /// sums `sums` (from [`MergeArea::publish_stats`]) and packed as f16,
    /// into this group's exchange slots, two tiles per slot (all of them,
    /// its own slice too: the slice is read back by tile number, and a
    /// register array indexed at run time would live in local memory). A
    /// row without keys in this group publishes zeros (its accumulators may
    /// hold 0 x NaN from V, so no product).
    ///
    /// # Safety
    /// `smem` is the dynamic shared memory base; every thread of group
    /// `split` is past its last read of the group's K/V tiles, which its
    /// exchange slots reuse; `O_TILES` is even.
    #[inline(always)]
    pub unsafe fn publish_partials<const O_TILES: usize>(
        &self,
        smem: *mut u8,
        (split, row_warp, lane): (u32, u32, u32),
        o: &[[f32; 4]; O_TILES],
        sums: [f32; 2],
    ) {
        let inverse = sums.map(|l| if l == 0.0 { 0.0 } else { math::rcp(l) });
        // (Two small loops: LLVM unrolls them; one loop doing both stays a
        // loop at D = 128 and puts the accumulators in local memory.)
        let mut scaled = *o;
        for tile in scaled.iter_mut() {
            for (e, x) in tile.iter_mut().enumerate() {
                *x = if inverse[e / 2] == 0.0 { 0.0 } else { *x * inverse[e / 2] };
            }
        }
        for pair in 0..O_TILES / 2 {
            let (even, odd) = (&scaled[2 * pair], &scaled[2 * pair + 1]);
            let slot = Slot([
                cvt::pack_f16x2(even[0], even[1]),
                cvt::pack_f16x2(even[2], even[3]),
                cvt::pack_f16x2(odd[0], odd[1]),
                cvt::pack_f16x2(odd[2], odd[3]),
            ]);
            let at = self.exchange_at(split, pair as u32, row_warp, lane);
            // SAFETY: this group's slot (16-byte aligned).
            unsafe { *(smem.add(at) as *mut Slot) = slot };
        }
    }

    /// Finishes group `split`'s slice of this thread's two output rows
    /// (after every group published its stats and partials, and a block
    /// barrier): hands `store` each pair `p` of accumulator tiles `split *
    /// SLICE + 2p` (even) and `+ 2p + 1` (odd) of the merged, normalized
    /// rows, times V's scale. A row that saw no key at all is exact zeros,
    /// and so is every group's part that saw none of the row's keys. (One
    /// pair at a time, handed on at once: a slice array filled in a loop
    /// that LLVM leaves rolled, as at D = 128, would live in local memory.)
    ///
    /// # Safety
    /// `smem` is the dynamic shared memory base; stats and partials are
    /// published; `SLICE * SPLITS == O_TILES`, `SLICE` even.
    #[inline(always)]
    pub unsafe fn finish_slice<const O_TILES: usize, const SPLITS: usize, const SLICE: usize>(
        &self,
        smem: *const u8,
        (split, row_warp, lane): (u32, u32, u32),
        local_rows: [u32; 2],
        v_scale: f32,
        mut store: impl FnMut(usize, [f32; 4], [f32; 4]),
    ) {
        // Per row h: each group's weight l_g 2^(m_g - max) times V's scale
        // over the merged sum (0 for a row without keys).
        let weights: [[f32; SPLITS]; 2] = core::array::from_fn(|h| {
            let stats: [[f32; 2]; SPLITS] = core::array::from_fn(|g| {
                // SAFETY: a published stats entry.
                unsafe { *(smem.add(self.stats_at(g as u32, local_rows[h])) as *const [f32; 2]) }
            });
            let (m, l) = (stats.map(|x| x[0]), stats.map(|x| x[1]));
            let (base, sum) = softmax::merge_splits(m, l, math::exp2);
            let scale = softmax::output_scale(sum, v_scale, math::rcp);
            core::array::from_fn(|g| l[g] * math::exp2(m[g] - base) * scale)
        });
        // SAFETY: `smem` is the dynamic shared memory base.
        let smem_addr = unsafe { smem::shared_addr(smem) };
        for pair in 0..SLICE / 2 {
            let slot_pair = (split * SLICE as u32) / 2 + pair as u32;
            let mut tiles = [[0f32; 4]; 2];
            for (g, w) in (0..SPLITS).map(|g| (g, [weights[0][g], weights[1][g]])) {
                let at = self.exchange_at(g as u32, slot_pair, row_warp, lane) as u32;
                // SAFETY: group g's published slot of these tiles (16-byte
                // aligned); one access (see `smem::load_f32x4`).
                let slot = unsafe { smem::load_f32x4(smem_addr + at) };
                // Word 2t + h holds tile t (even, odd) of the pair, row h.
                for word in 0..4 {
                    let (t, h) = (word / 2, word % 2);
                    let [lo, hi] = cvt::unpack_f16x2(slot[word].to_bits());
                    tiles[t][2 * h] += lo * w[h];
                    tiles[t][2 * h + 1] += hi * w[h];
                }
            }
            store(pair, tiles[0], tiles[1]);
        }
    }
}
