//! Merging the partial results of key groups (`split`): every
//! group of warps has run the online softmax over its share of a query
//! block's keys; here they combine through shared memory.
//!
//! 1. [`MergeArea::publish_stats`]: each group writes its (running maximum,
//!    row sum) per query row; then a block barrier.
//! 2. [`MergeArea::shares`]: each thread reads every group's statistics of
//!    its two rows and gets its group's share of the output
//!    (`softmax::merge_splits`); the kernel writes its partial rows scaled by
//!    that share into its group's f32 scratch rows ([`MergeArea::scratch_at`],
//!    in its own accumulator layout); then a block barrier.
//! 3. [`MergeArea::store_sum`]: the whole block adds the groups' scratch rows
//!    and stores the output as f16.

use super::block::BlockJob;
use super::online::Rows;
use crate::arch::{cvt, math, shfl};
use crate::softmax;

/// Where the merge lives in a block's dynamic shared memory.
#[derive(Clone, Copy)]
pub struct MergeArea {
    /// Offset of the `(max, sum)` f32 pairs, indexed `[group][row]`.
    pub stats: u32,
    /// Offset of the f32 scratch rows, indexed `[group][row]`.
    pub scratch: u32,
    /// Bytes per scratch row.
    pub scratch_row: u32,
    /// Query rows per block.
    pub block_m: u32,
}

impl MergeArea {
    /// Byte offset of the `(max, sum)` entry of `row` for group `split`.
    #[inline(always)]
    const fn stats_at(&self, split: u32, row: u32) -> usize {
        (self.stats + 8 * (split * self.block_m + row)) as usize
    }

    /// Byte offset of column `col` of scratch row `row` of group `split`.
    #[inline(always)]
    pub const fn scratch_at(&self, split: u32, row: u32, col: u32) -> usize {
        (self.scratch + (split * self.block_m + row) * self.scratch_row + 4 * col) as usize
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

    /// For each of this thread's two rows (after every group published and
    /// a block barrier): the factor that turns this group's accumulator into
    /// its share of the output, and whether the row saw no key at all (then
    /// it must be written as exact zeros: its accumulator may hold 0 x NaN
    /// from V, so no product).
    ///
    /// # Safety
    /// `smem` is the dynamic shared memory base; the stats are published.
    #[inline(always)]
    pub unsafe fn shares<const SPLITS: usize>(
        &self,
        smem: *const u8,
        local_rows: [u32; 2],
        rows: &Rows,
        v_scale: f32,
    ) -> [(f32, bool); 2] {
        core::array::from_fn(|h| {
            let stats: [[f32; 2]; SPLITS] = core::array::from_fn(|s| {
                // SAFETY: a published stats entry.
                unsafe { *(smem.add(self.stats_at(s as u32, local_rows[h])) as *const [f32; 2]) }
            });
            let (base, sum) = softmax::merge_splits(stats.map(|x| x[0]), stats.map(|x| x[1]), math::exp2);
            let scale = softmax::output_scale(sum, v_scale);
            (math::exp2(rows.m[h].0 - base) * scale, scale == 0.0)
        })
    }

    /// Adds the groups' scratch rows (after they are written and a block
    /// barrier), four columns per thread and step, and stores the block's
    /// output rows as f16; thread `thread` of `threads`.
    ///
    /// # Safety
    /// `smem` is the dynamic shared memory base; the scratch rows are
    /// written; `job.o` points at the block's `job.rows` output rows.
    #[inline(always)]
    pub unsafe fn store_sum<const HEAD_DIM: usize, const SPLITS: usize>(
        &self,
        smem: *const u8,
        job: &BlockJob,
        thread: u32,
        threads: u32,
    ) {
        let quads_per_row = HEAD_DIM as u32 / 4;
        let mut c = thread;
        while c < job.rows * quads_per_row {
            let (row, col) = (c / quads_per_row, 4 * (c % quads_per_row));
            let mut sum = [0f32; 4];
            for s in 0..SPLITS as u32 {
                // SAFETY: a written scratch row (16-byte aligned: col % 4 == 0).
                let part = unsafe { *(smem.add(self.scratch_at(s, row, col)) as *const [f32; 4]) };
                for e in 0..4 {
                    sum[e] += part[e];
                }
            }
            let packed = [cvt::pack_f16x2(sum[0], sum[1]), cvt::pack_f16x2(sum[2], sum[3])];
            // SAFETY: row < job.rows, col + 3 < HEAD_DIM: inside the block's output rows; 8-byte aligned.
            unsafe { *(job.o.add((row * HEAD_DIM as u32 + col) as usize) as *mut [u32; 2]) = packed };
            c += threads;
        }
    }
}
