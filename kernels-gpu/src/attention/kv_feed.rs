//! How `split`'s Q, K and V tiles reach shared memory, and when a warp may
//! read them. One interface ([`GroupFeed`]), one implementation per
//! architecture:
//!
//! - sm_89: every thread of a key group copies 16-byte chunks of the
//!   group's tiles with `cp.async`. A tile is readable after
//!   `cp.async.wait_group` and a block barrier, so the groups step together
//!   (a group whose key blocks ran out idles at the barriers), and a
//!   refill is safe once the next step's barrier has passed.
//! - sm_90: the group's first row warp copies each tile on the copy engine,
//!   one `cp.async.bulk` per row (a lane a row; rows past the keys repeat
//!   the last key row, whose scores the mask removes), completing on the
//!   stage's "full" transaction barrier; readers wait on that barrier. A
//!   stage that will be refilled is released by every reader arriving on
//!   its "empty" barrier, which the copying warp waits for first. No block
//!   barrier in the key loop: each group walks its own key blocks. (The
//!   `cp.async` copies of sm_89 cost a quarter of `split`'s warp samples at
//!   (1,8,512,64) on the H200: issue loops and the per-step barrier, ncu
//!   run 26.)

#[cfg(not(target_feature = "sm_90a"))]
use super::block::load_rows;
#[cfg(target_feature = "sm_90a")]
use crate::arch::bulk;
#[cfg(not(target_feature = "sm_90a"))]
use crate::arch::cp_async;
use crate::arch::{bar, sreg};
#[cfg(not(target_feature = "sm_90a"))]
use crate::layout::RowLayout;
use crate::tiles::SplitSmemPlan;

/// One warp's view of its key group's K/V pipeline: `STAGES` buffers of
/// `BLOCK_N`-key tiles, group `split` taking key blocks `split, split +
/// SPLITS, ..`; `ROW_WARPS` warps read each tile.
pub struct GroupFeed<
    const HEAD_DIM: usize,
    const BLOCK_N: usize,
    const STAGES: usize,
    const ROW_WARPS: usize,
    const SPLITS: usize,
> {
    plan: SplitSmemPlan,
    /// Shared-window address of the dynamic shared memory.
    smem: u32,
    /// This warp's key group.
    split: u32,
    /// This warp's row warp (0 copies the group's tiles on sm_90).
    row_warp: u32,
    /// K and V of the block's key/value head (key 0).
    k: *const u8,
    v: *const u8,
    seq_kv: u32,
    /// Key blocks of the query block (all groups).
    key_blocks: u32,
    /// Key blocks of this group.
    my_blocks: u32,
}

impl<const HEAD_DIM: usize, const BLOCK_N: usize, const STAGES: usize, const ROW_WARPS: usize, const SPLITS: usize>
    GroupFeed<HEAD_DIM, BLOCK_N, STAGES, ROW_WARPS, SPLITS>
{
    /// The feed of warp `warp` (row warp `warp % ROW_WARPS` of group
    /// `warp / ROW_WARPS`) for a query block with `key_blocks` key blocks
    /// of the head whose K and V start at `k` and `v` (`seq_kv` keys).
    #[inline(always)]
    pub fn new(
        plan: SplitSmemPlan,
        smem: u32,
        warp: u32,
        (k, v): (*const u8, *const u8),
        seq_kv: u32,
        key_blocks: u32,
    ) -> Self {
        let (row_warp, split) = (warp % ROW_WARPS as u32, warp / ROW_WARPS as u32);
        let my_blocks = if split < key_blocks { (key_blocks - split).div_ceil(SPLITS as u32) } else { 0 };
        Self { plan, smem, split, row_warp, k, v, seq_kv, key_blocks, my_blocks }
    }

    /// Whether this group has a local key block `i`.
    #[inline(always)]
    pub fn has(&self, i: u32) -> bool {
        i < self.my_blocks
    }

    /// The first key of local key block `i`.
    #[inline(always)]
    pub fn key0(&self, i: u32) -> u32 {
        (self.split + i * SPLITS as u32) * BLOCK_N as u32
    }

    /// Shared-window address of the K tile of local key block `i`.
    #[inline(always)]
    pub fn k_tile(&self, i: u32) -> u32 {
        self.smem + self.plan.k_stage(self.split, i % STAGES as u32, BLOCK_N as u32)
    }

    /// Shared-window address of the V tile of local key block `i`.
    #[inline(always)]
    pub fn v_tile(&self, i: u32) -> u32 {
        self.smem + self.plan.v_stage(self.split, i % STAGES as u32, BLOCK_N as u32)
    }

    /// Keys of local key block `i` that exist (the rest of the tile is
    /// past `seq_kv`).
    #[inline(always)]
    fn valid_keys(&self, i: u32) -> u32 {
        (self.seq_kv - self.key0(i)).min(BLOCK_N as u32)
    }
}

/// sm_89: `cp.async` copies and block barriers.
#[cfg(not(target_feature = "sm_90a"))]
impl<const HEAD_DIM: usize, const BLOCK_N: usize, const STAGES: usize, const ROW_WARPS: usize, const SPLITS: usize>
    GroupFeed<HEAD_DIM, BLOCK_N, STAGES, ROW_WARPS, SPLITS>
{
    /// Steps of the key loop: the same for every group (group 0's count).
    #[inline(always)]
    pub fn steps(&self) -> u32 {
        self.key_blocks.div_ceil(SPLITS as u32)
    }

    /// Issues local key block `i` into its stage (every thread of the group).
    ///
    /// # Safety
    /// Uniform over the group; `i` is one of this group's key blocks.
    #[inline(always)]
    unsafe fn issue(&self, i: u32) {
        let rows = RowLayout::Padded { stride: self.plan.fp8_row };
        let team = (sreg::thread_idx_x() % (32 * ROW_WARPS as u32), 32 * ROW_WARPS as u32);
        let offset = self.key0(i) as usize * HEAD_DIM;
        let (block_n, valid) = (BLOCK_N as u32, self.valid_keys(i));
        // SAFETY: key rows below `valid` are inside K and V.
        unsafe {
            load_rows::<HEAD_DIM, false>(self.k_tile(i), rows, self.k.wrapping_add(offset), block_n, valid, team);
            load_rows::<HEAD_DIM, false>(self.v_tile(i), rows, self.v.wrapping_add(offset), block_n, valid, team);
        }
    }

    /// Copies the block's `block_m` Q rows (`q_rows` of them exist, from
    /// `q`) and each group's first key blocks; returns when Q is readable.
    ///
    /// # Safety
    /// Block-uniform; Q rows below `q_rows` readable.
    #[inline(always)]
    pub unsafe fn start(&self, q: *const u8, block_m: u32, q_rows: u32) {
        let rows = RowLayout::Padded { stride: self.plan.fp8_row };
        let threads = 32 * (ROW_WARPS * SPLITS) as u32;
        let thread = sreg::thread_idx_x();
        // SAFETY: forwarded; one commit group for Q, one per prologue stage.
        unsafe {
            load_rows::<HEAD_DIM, false>(self.smem + self.plan.q, rows, q, block_m, q_rows, (thread, threads));
            cp_async::commit_group();
            for i in 0..STAGES as u32 - 1 {
                if self.has(i) {
                    self.issue(i);
                }
                cp_async::commit_group();
            }
            cp_async::wait_group(STAGES as u32 - 1);
            bar::sync_threads();
        }
    }

    /// Waits until local key block `i` is readable, and refills the stage
    /// that block `i - 1` used.
    ///
    /// # Safety
    /// Block-uniform (every thread, every step).
    #[inline(always)]
    pub unsafe fn acquire(&self, i: u32) {
        // SAFETY: block-uniform; after the barrier every group is past block i - 1.
        unsafe {
            cp_async::wait_group(STAGES as u32 - 2);
            bar::sync_threads();
            if self.has(i + STAGES as u32 - 1) {
                self.issue(i + STAGES as u32 - 1);
            }
            cp_async::commit_group();
        }
    }

    /// This warp is done reading local key block `i` (the next step's
    /// barrier covers the refill).
    ///
    /// # Safety
    /// None.
    #[inline(always)]
    pub unsafe fn release(&self, _i: u32) {}

    /// Waits for every copy of this thread (before the merge reuses the tiles).
    ///
    /// # Safety
    /// None beyond ordering.
    #[inline(always)]
    pub unsafe fn finish(&self) {
        // SAFETY: only waits.
        unsafe { cp_async::wait_group(0) }
    }
}

/// sm_90: bulk copies completing on transaction barriers.
#[cfg(target_feature = "sm_90a")]
impl<const HEAD_DIM: usize, const BLOCK_N: usize, const STAGES: usize, const ROW_WARPS: usize, const SPLITS: usize>
    GroupFeed<HEAD_DIM, BLOCK_N, STAGES, ROW_WARPS, SPLITS>
{
    /// Steps of the key loop: this group's key blocks.
    #[inline(always)]
    pub fn steps(&self) -> u32 {
        self.my_blocks
    }

    /// This warp copies the group's tiles.
    #[inline(always)]
    fn producer(&self) -> bool {
        self.row_warp == 0
    }

    fn full(&self, i: u32) -> u32 {
        self.smem + self.plan.full_barrier(self.split, i % STAGES as u32, STAGES as u32)
    }

    fn empty(&self, i: u32) -> u32 {
        self.smem + self.plan.empty_barrier(self.split, i % STAGES as u32, STAGES as u32)
    }

    /// The parity of the phase in which a stage's barriers see local key
    /// block `i` (its `i / STAGES`-th use of the stage).
    fn parity(i: u32) -> u32 {
        (i / STAGES as u32) % 2
    }

    /// Copies `rows` rows of `HEAD_DIM` bytes from `src` (rows at or past
    /// `valid` repeat row `valid - 1`) into the padded tile at `dst`, one
    /// bulk copy per row, counted off `bar`.
    ///
    /// # Safety
    /// Converged warp; `0 < valid`, source rows below `valid` readable.
    #[inline(always)]
    unsafe fn copy_rows(&self, dst: u32, src: *const u8, rows: u32, valid: u32, bar: u32) {
        let mut r = sreg::lane_id();
        while r < rows {
            let from = src.wrapping_add(r.min(valid - 1) as usize * HEAD_DIM);
            // SAFETY: forwarded; 16-byte aligned rows (HEAD_DIM and the padded stride are multiples of 16).
            unsafe { bulk::copy_to_shared(dst + r * self.plan.fp8_row, from, HEAD_DIM as u32, bar) };
            r += 32;
        }
    }

    /// Issues local key block `i` into its stage (the producer warp).
    ///
    /// # Safety
    /// Converged producer warp; the stage is free (never used, or released).
    #[inline(always)]
    unsafe fn issue(&self, i: u32) {
        let full = self.full(i);
        let offset = self.key0(i) as usize * HEAD_DIM;
        let valid = self.valid_keys(i);
        // SAFETY: one arrival with the tile's bytes, then the copies that count them off.
        unsafe {
            if sreg::lane_id() == 0 {
                bulk::arrive_expect_tx(full, 2 * (BLOCK_N * HEAD_DIM) as u32);
            }
            self.copy_rows(self.k_tile(i), self.k.wrapping_add(offset), BLOCK_N as u32, valid, full);
            self.copy_rows(self.v_tile(i), self.v.wrapping_add(offset), BLOCK_N as u32, valid, full);
        }
    }

    /// Initializes the barriers, copies the block's `block_m` Q rows
    /// (`q_rows` of them exist, from `q`; warp 0) and each group's first
    /// `STAGES` key blocks; returns when Q is readable.
    ///
    /// # Safety
    /// Block-uniform; Q rows below `q_rows` readable (`q_rows > 0`).
    #[inline(always)]
    pub unsafe fn start(&self, q: *const u8, block_m: u32, q_rows: u32) {
        let q_barrier = self.smem + self.plan.q_barrier();
        // SAFETY: thread 0 initializes every barrier before the block
        // barrier that publishes them; nothing touches them before it.
        unsafe {
            if sreg::thread_idx_x() == 0 {
                bulk::init(q_barrier, 1);
                for split in 0..SPLITS as u32 {
                    for stage in 0..STAGES as u32 {
                        bulk::init(self.smem + self.plan.full_barrier(split, stage, STAGES as u32), 1);
                        let readers = 32 * ROW_WARPS as u32;
                        bulk::init(self.smem + self.plan.empty_barrier(split, stage, STAGES as u32), readers);
                    }
                }
                bulk::fence_init();
            }
            bar::sync_threads();
        }
        // SAFETY: converged warps; the barriers are initialized and published.
        unsafe {
            if sreg::warp_id() == 0 {
                if sreg::lane_id() == 0 {
                    bulk::arrive_expect_tx(q_barrier, block_m * HEAD_DIM as u32);
                }
                self.copy_rows(self.smem + self.plan.q, q, block_m, q_rows, q_barrier);
            }
            if self.producer() {
                for i in 0..STAGES as u32 {
                    if self.has(i) {
                        self.issue(i);
                    }
                }
            }
            bulk::wait_parity(q_barrier, 0);
        }
    }

    /// Waits until local key block `i` is readable; the producer first
    /// refills the stage that block `i - 1` used, once its readers released it.
    ///
    /// # Safety
    /// Converged warp; `i` one of this group's key blocks, called in order.
    #[inline(always)]
    pub unsafe fn acquire(&self, i: u32) {
        // SAFETY: the stage of block i - 1 is refilled only after its release.
        unsafe {
            if self.producer() && i > 0 && self.has(i - 1 + STAGES as u32) {
                bulk::wait_parity(self.empty(i - 1), Self::parity(i - 1));
                self.issue(i - 1 + STAGES as u32);
            }
            bulk::wait_parity(self.full(i), Self::parity(i));
        }
    }

    /// This warp is done reading local key block `i`: releases its stage if
    /// it will be refilled.
    ///
    /// # Safety
    /// After this warp's last read of block `i`'s tiles.
    #[inline(always)]
    pub unsafe fn release(&self, i: u32) {
        if self.has(i + STAGES as u32) {
            // SAFETY: the stage's empty barrier expects every reader once per use.
            unsafe { bulk::arrive(self.empty(i)) }
        }
    }

    /// Nothing is in flight once the loop has waited for every tile.
    ///
    /// # Safety
    /// None.
    #[inline(always)]
    pub unsafe fn finish(&self) {}
}
