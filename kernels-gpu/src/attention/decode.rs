//! `decode`: the `split` body walking few query rows against many keys.
//!
//! Two things change against prefill ([`super::walk::FullRows`]):
//!
//! - **Folded heads.** The `heads_q / heads_kv` query heads that read one
//!   key/value head become one head of `fold_rows = group * seq_q` rows
//!   (`params::DecodeSplits`), contiguous in Q and O, so one block reads
//!   each K/V byte once for all of them. Its rows' query heads may carry
//!   different Q scales: each thread multiplies its two rows' scores by
//!   its own ([`Walk::scale_scores`]), the block's common factor leaving Q
//!   out. Causal masking takes each row's position (`row % seq_q`).
//! - **Split keys.** `kv_splits` blocks share a (query block, folded head)'s
//!   keys, `split_keys` each (grid `(query blocks, kv_splits, batch *
//!   heads_kv)`); each stores its rows' output over its keys, normalized,
//!   with their softmax statistics (maximum and sum: `params::DecodeSplits`),
//!   and [`merge_splits`] combines them. With one
//!   split the block stores O itself.
//!
//! Per-batch key lengths (`AttnParams::seq_used_k`) end each batch's walk
//! early; the log-sum-exp output (`AttnParams::lse`) is written where asked.
//! Which keys a row sees and what its scores are is the walk's
//! [`ScoreKeys`](super::walk::ScoreKeys) policy: every key (or causal masking), or a key window
//! ([`WindowedKeys`](super::walk::WindowedKeys): each split walks only the key blocks of its rows'
//! windows), perhaps with capped scores ([`CappedKeys`](super::walk::CappedKeys)).

use super::block::BlockJob;
use super::merge::MergeArea;
use super::output::OutputFormat;
use super::walk::{AllKeys, KeyRows, ScoreKeys, Walk, for_four_columns, store_tile_pairs};
use crate::arch::{bar, grid_dep, math, smem, sreg};
use crate::kernels::{DECODE_D64, DECODE_D128, DECODE_MERGE_THREADS};
use crate::layout::RowLayout;
use crate::params::{self, AttnParams, DecodeSplits};
use crate::schedule;
use crate::softmax;
use crate::window::{self, KeyWindow};
use core::marker::PhantomData;

/// The decode walk (see the module docs), its rows' keys as `K` says.
pub struct Decode<K: ScoreKeys = AllKeys>(PhantomData<K>);

/// The key block of both `decode` kernels: a window's walk starts at a
/// multiple of it.
const DECODE_KEY_BLOCK: u32 = DECODE_D64.block_n;
const _: () = assert!(DECODE_D128.block_n == DECODE_KEY_BLOCK);

/// A thread's two folded rows: the keys each sees, and their query heads'
/// Q scales.
#[derive(Clone, Copy)]
pub struct FoldedRows {
    /// Each row sees the keys below this (its position's causal or window
    /// limit, or the batch's key length).
    key_limits: [i32; 2],
    /// Each row sees the keys from this on (its window's first key; below
    /// every key without a window).
    key_starts: [i32; 2],
    /// The keys from this on need no mask in any row of the block at their
    /// start (the last position's window start; 0 without a window).
    unmasked_begin: u32,
    /// The keys below this need no mask in any row of the block (position
    /// 0's limit).
    unmasked_end: u32,
    /// The batch's key length: V rows at or past it are cleared.
    keys: u32,
    /// Each row's Q dequantization scale.
    q_scales: [f32; 2],
    /// The first column of the thread in each 8-key accumulator tile.
    col: u32,
}

/// Where a decode block sits: its folded head (`batch * heads_kv + kv
/// head`), that head's batch and key/value head, and the query heads per
/// key/value head.
struct FoldedHead {
    head: u32,
    batch: u32,
    kv_head: u32,
    group: u32,
}

impl FoldedHead {
    /// Folded head `head` of the problem `p`.
    #[inline(always)]
    fn of(p: &AttnParams, head: u32) -> FoldedHead {
        let batch = p.heads_kv_div.div(head);
        FoldedHead { head, batch, kv_head: head - batch * p.heads_kv, group: p.heads_kv_div.div(p.heads_q) }
    }

    /// Rows of the folded head.
    #[inline(always)]
    fn rows(&self, p: &AttnParams) -> u32 {
        self.group * p.seq_q
    }

    /// K's and V's dequantization scales of the folded head's key/value
    /// head.
    ///
    /// # Safety
    /// `p.k_scale` and `p.v_scale` hold the entry `params::scale_index`
    /// names (host-validated).
    #[inline(always)]
    unsafe fn kv_scales(&self, p: &AttnParams) -> (f32, f32) {
        let (_, kv_index) = params::scale_index(p.scale_batch_stride, self.batch, 0, self.kv_head);
        // SAFETY: the caller's contract.
        unsafe {
            (*(p.k_scale as *const f32).add(kv_index as usize), *(p.v_scale as *const f32).add(kv_index as usize))
        }
    }

    /// The batch's key length: `seq_used_k[batch]` clamped to `0 ..=
    /// seq_kv`, or `seq_kv`.
    ///
    /// # Safety
    /// `p.seq_used_k` is 0 or holds `batch` int32 entries.
    #[inline(always)]
    unsafe fn seq_kv(&self, p: &AttnParams) -> u32 {
        if p.seq_used_k == 0 {
            return p.seq_kv;
        }
        // SAFETY: the caller's contract.
        let used = unsafe { *(p.seq_used_k as *const i32).add(self.batch as usize) };
        (used.max(0) as u32).min(p.seq_kv)
    }
}

/// The partial-result layout of the problem `p`.
#[inline(always)]
fn splits_of<const HEAD_DIM: usize>(p: &AttnParams) -> DecodeSplits {
    DecodeSplits::new(HEAD_DIM as u32, p.batch, p.heads_q, p.heads_kv, p.seq_q, p.kv_splits)
}

/// Natural log of 2: base-2 log-sum-exps to natural ones.
const LN2: f32 = core::f32::consts::LN_2;

impl<K: ScoreKeys> Walk for Decode<K> {
    type ThreadRows = FoldedRows;

    const ROTATES: bool = false;

    #[inline(always)]
    unsafe fn job<const HEAD_DIM: usize>(p: &AttnParams, (block_m, _): (u32, u32)) -> BlockJob {
        let (query_block, split, head) = sreg::block_idx();
        let at = FoldedHead::of(p, head);
        let row0 = query_block * block_m;
        let d = HEAD_DIM as u64;
        let q_offset = (head as u64 * at.rows(p) as u64 + row0 as u64) * d;
        let kv_offset = head as u64 * p.seq_kv as u64 * d;
        // SAFETY: the first global memory access of the block follows.
        unsafe { grid_dep::wait() };
        // SAFETY: host-validated `seq_used_k`.
        let seq_kv = unsafe { at.seq_kv(p) };
        // The keys the splits share: every key, or under a window the
        // ones some position's window holds (`KeyWindow::decode_keys`; the
        // host plans the splits over as many).
        let (first, end) =
            if K::WINDOWED { p.window().decode_keys(p.seq_q, seq_kv, DECODE_KEY_BLOCK) } else { (0, seq_kv) };
        let key_begin = first + split * p.split_keys;
        let key_end = (key_begin + p.split_keys).min(end).max(key_begin);
        // SAFETY: host-validated scale arrays.
        let (k_scale, v_scale) = unsafe { at.kv_scales(p) };
        BlockJob {
            q: (p.q + q_offset) as *const u8,
            k: (p.k + kv_offset) as *const u8,
            v: (p.v + kv_offset) as *const u8,
            o: (p.o + 2 * q_offset) as *mut u16,
            q_head: head as u64,
            kv_head: head as u64,
            q_row_stride: HEAD_DIM as u32,
            o_row_stride: HEAD_DIM as u32,
            seq_q: at.rows(p),
            seq_kv,
            kv_row0: 0,
            kv_tile0: 0,
            row0,
            rows: block_m.min(at.rows(p) - row0),
            key_begin,
            key_end,
            // Q's scale is each row's own (`scale_scores`).
            score_scale_log2: if K::CAPPED {
                window::softcap_score_factor(p.softcap)
            } else {
                softmax::score_scale_log2(p.softmax_scale, 1.0, k_scale)
            },
            v_scale,
        }
    }

    /// `[B, Hkv, Skv, D]` K and V as prefill's. Otherwise every head's
    /// rows lie side by side, as `AttnParams::kv_strides` says: paged,
    /// the key block's page from the table (a key block never straddles
    /// two pages: pages are whole key blocks); a `[B, Skv, Hkv, D]` cache
    /// (`packed_keys` set, no table), the batch's rows from `batch *
    /// seq_kv`.
    #[inline(always)]
    unsafe fn key_rows<const HEAD_DIM: usize>(p: &AttnParams, job: &BlockJob, key0: u32, block_n: u32) -> KeyRows {
        if p.page_table == 0 && p.packed_keys == 0 {
            return KeyRows::contiguous::<HEAD_DIM>(p, job, key0, block_n);
        }
        let at = FoldedHead::of(p, job.kv_head as u32);
        let row = if p.page_table == 0 {
            at.batch * p.seq_kv + key0
        } else {
            let entry = at.batch as usize * p.max_pages as usize + (key0 >> p.page_shift) as usize;
            // SAFETY: the table holds `batch * max_pages` entries
            // (host-validated).
            let page = unsafe { *(p.page_table as *const i32).add(entry) };
            let page = (page.max(0) as u32).min(p.pages - 1);
            (page << p.page_shift) + (key0 & ((1 << p.page_shift) - 1))
        };
        let offset = p.kv_strides.offset(row, at.kv_head) as usize;
        KeyRows {
            row,
            head: at.kv_head,
            k: (p.k as *const u8).wrapping_add(offset),
            v: (p.v as *const u8).wrapping_add(offset),
            stride: p.kv_strides.row,
            valid: (p.seq_kv - key0).min(block_n),
        }
    }

    #[inline(always)]
    unsafe fn no_keys<const HEAD_DIM: usize>(p: &AttnParams, job: &BlockJob, threads: u32) {
        if p.kv_splits <= 1 {
            // SAFETY: the block's own output rows.
            unsafe { job.zero_output::<HEAD_DIM>(threads) };
        }
        let mut row = sreg::thread_idx_x();
        while row < job.rows {
            // SAFETY: the block's own rows of the partial statistics or the
            // final log-sum-exp.
            unsafe { store_stats::<HEAD_DIM>(p, job, row, [0.0, 0.0]) };
            row += threads;
        }
    }

    #[inline(always)]
    unsafe fn thread_rows(p: &AttnParams, job: &BlockJob, local_rows: [u32; 2], col: u32) -> FoldedRows {
        let at = FoldedHead::of(p, job.q_head as u32);
        let causal = p.causal != 0;
        // SAFETY: host-validated `seq_used_k`.
        let seq_kv = unsafe { at.seq_kv(p) };
        let limit = |position: u32| {
            let last = schedule::causal_last_key(position, p.seq_q, seq_kv);
            if causal { (last + 1).min(seq_kv as i32) } else { seq_kv as i32 }
        };
        // Under a window (which replaces causal masking): its limit and
        // start at a position.
        let window = p.window();
        let window_limit = |position: u32| (window.last_key(position, p.seq_q, seq_kv) + 1).min(seq_kv as i32);
        let mut key_limits = [0i32; 2];
        let mut key_starts = [i32::MIN; 2];
        let mut q_scales = [0f32; 2];
        for h in 0..2 {
            let row = job.row0 + local_rows[h];
            let head_in_group = p.seq_q_div.div(row);
            if K::WINDOWED {
                let position = row - head_in_group * p.seq_q;
                key_limits[h] = window_limit(position);
                key_starts[h] = window.first_key(position, p.seq_q, seq_kv);
            } else {
                key_limits[h] = limit(row - head_in_group * p.seq_q);
            }
            // Rows past the folded head (never stored) read the last head's scale.
            let q_head = at.kv_head * at.group + head_in_group.min(at.group - 1);
            let (q_index, _) = params::scale_index(p.scale_batch_stride, at.batch, q_head, at.kv_head);
            // SAFETY: the Q scale array holds this entry (host-validated).
            q_scales[h] = unsafe { *(p.q_scale as *const f32).add(q_index as usize) };
        }
        let (unmasked_begin, unmasked_end) = if K::WINDOWED {
            (window.first_key(p.seq_q - 1, p.seq_q, seq_kv).max(0) as u32, window_limit(0).max(0) as u32)
        } else {
            (0, limit(0).max(0) as u32)
        };
        if K::CAPPED {
            // The rows' factors to their tanh's argument.
            // SAFETY: host-validated scale arrays.
            let (k_scale, _) = unsafe { at.kv_scales(p) };
            let to_tanh =
                window::softcap_input_scale(softmax::score_scale_log2(p.softmax_scale, 1.0, k_scale), p.softcap);
            q_scales = q_scales.map(|s| s * to_tanh);
        }
        FoldedRows { key_limits, key_starts, unmasked_begin, unmasked_end, keys: seq_kv, q_scales, col }
    }

    /// Each row's scores times its Q scale; where the block may hide a key
    /// from a row (past position 0's limit, the lowest: a split ends at a
    /// multiple of the key block or at the batch's key length; or under a
    /// window before the last position's start), `-inf` for the keys at or
    /// past the row's own limit or before its start.
    #[inline(always)]
    fn prepare_scores<const S_TILES: usize>(s: &mut [[f32; 4]; S_TILES], rows: &FoldedRows, key0: u32) {
        let inside = !K::WINDOWED || key0 >= rows.unmasked_begin;
        if inside && key0 + 8 * S_TILES as u32 <= rows.unmasked_end {
            for tile in s.iter_mut() {
                for (e, x) in tile.iter_mut().enumerate() {
                    *x *= rows.q_scales[e / 2];
                    if K::CAPPED {
                        *x = math::tanh(*x);
                    }
                }
            }
            return;
        }
        for (t, tile) in s.iter_mut().enumerate() {
            for (e, x) in tile.iter_mut().enumerate() {
                let key = (key0 + 8 * t as u32 + rows.col + e as u32 % 2) as i32;
                let scaled = *x * rows.q_scales[e / 2];
                let scaled = if K::CAPPED { math::tanh(scaled) } else { scaled };
                let seen = key < rows.key_limits[e / 2] && (!K::WINDOWED || key >= rows.key_starts[e / 2]);
                *x = if seen { scaled } else { f32::NEG_INFINITY };
            }
        }
    }

    /// Zeros the V rows of the block at or past the batch's key length: a
    /// cache's slots past `seq_used_k` (or, in the last block, past the
    /// tensor) may hold anything, NaN included, and a masked key's `p = 0`
    /// times NaN would still be NaN. (Their K rows need nothing: their
    /// scores are replaced by `-inf`.) Decode's key groups are one warp.
    #[inline(always)]
    unsafe fn prepare_values<const HEAD_DIM: usize>(
        v_tile: *mut u8,
        layout: RowLayout,
        key0: u32,
        block_n: u32,
        rows: &FoldedRows,
    ) {
        if key0 + block_n <= rows.keys {
            return;
        }
        let valid = rows.keys.saturating_sub(key0);
        let chunks_per_row = HEAD_DIM as u32 / 16;
        let mut chunk = sreg::lane_id();
        while chunk < (block_n - valid) * chunks_per_row {
            let (row, col) = (valid + chunk / chunks_per_row, chunk % chunks_per_row * 16);
            // SAFETY: inside this group's landed V tile (16-byte chunks of its rows).
            unsafe { *(v_tile.add(layout.offset(row, col) as usize) as *mut [u32; 4]) = [0; 4] };
            chunk += 32;
        }
        // SAFETY: converged warp (the caller's contract); orders the zeros
        // before the warp's reads of the tile.
        unsafe { bar::sync_warp() };
    }

    /// Never: [`Decode::prepare_scores`] masks the folded rows itself.
    #[inline(always)]
    fn needs_mask(_: &AttnParams, _: &BlockJob, _: u32, _: u32) -> bool {
        false
    }

    #[inline(always)]
    unsafe fn store<const HEAD_DIM: usize, const SLICE: usize, const SPLITS: usize, Out: OutputFormat>(
        p: &AttnParams,
        job: &BlockJob,
        slice: &[[f32; 4]; SLICE],
        tile0: u32,
        local_rows: [u32; 2],
        (merge, smem): (&MergeArea, *const u8),
        (key_group, quad): (u32, u32),
    ) {
        if p.kv_splits <= 1 {
            // SAFETY: forwarded.
            unsafe { store_tile_pairs::<HEAD_DIM, SLICE, Out>(job, slice, tile0, local_rows, quad) };
        } else {
            let layout = splits_of::<HEAD_DIM>(p);
            let split = sreg::block_idx_y();
            for_four_columns(slice, tile0, local_rows, job.rows, quad, |row, col, values| {
                let at = p.partials + layout.output(job.q_head, split, job.row0 + row) + 4 * col as u64;
                // SAFETY: this block's partial row (16-byte aligned: col % 4 == 0).
                unsafe { *(at as *mut [f32; 4]) = values };
            });
        }
        if key_group == 0 && quad == 0 {
            // SAFETY: the merge's statistics are published (the caller's contract).
            let stats = unsafe { merge.row_stats::<SPLITS>(smem, local_rows) };
            for h in 0..2 {
                if local_rows[h] < job.rows {
                    // SAFETY: a row of the block.
                    unsafe { store_stats::<HEAD_DIM>(p, job, local_rows[h], stats[h]) };
                }
            }
        }
    }
}

/// Stores the softmax statistics `[base, sum]` of the block's row `row`
/// (`MergeArea::row_stats`): into the block's partial results with several
/// splits, else as the row's log-sum-exp (natural log) into the output
/// where one is asked for.
///
/// # Safety
/// `row < job.rows`; the buffers as the host made them.
#[inline(always)]
unsafe fn store_stats<const HEAD_DIM: usize>(p: &AttnParams, job: &BlockJob, row: u32, [base, sum]: [f32; 2]) {
    let row = job.row0 + row;
    if p.kv_splits > 1 {
        let at = p.partials + splits_of::<HEAD_DIM>(p).stats(job.q_head, sreg::block_idx_y(), row);
        // SAFETY: this block's partial statistics (8-byte aligned).
        unsafe { *(at as *mut [f32; 2]) = [base, sum] };
    } else if p.lse != 0 {
        let rows = FoldedHead::of(p, job.q_head as u32).rows(p) as u64;
        // SAFETY: the row's entry of `[B, Hq, Sq]` (the folded head's rows are contiguous there).
        unsafe { *(p.lse as *mut f32).add((job.q_head * rows + row as u64) as usize) = lse_of(base, sum) };
    }
}

/// The natural log-sum-exp of a row whose base-2 statistics are `base`
/// and `sum` ([`softmax::log_sum_exp`]).
#[inline(always)]
fn lse_of(base: f32, sum: f32) -> f32 {
    softmax::log_sum_exp(base, sum, math::log2)
}

/// Warps of a [`merge_splits`] block (`kernels::DECODE_MERGE_THREADS`).
const MERGE_WARPS: u32 = DECODE_MERGE_THREADS / 32;

/// Splits whose partial rows a warp of [`merge_splits`] loads at once:
/// each batch of loads is one round trip to L2 that the weighing waits for.
const MERGE_UNROLL: usize = 8;

/// One warp's share of a row's merge: its splits' largest maximum among
/// those that saw a key of the row (`-inf` where none did: then its sum and
/// columns are 0), the sum of its weights taken against that maximum, and
/// this lane's weighted columns.
struct WarpMerge<const COLS: usize> {
    max: f32,
    total: f32,
    out: [f32; COLS],
}

/// The merge of `decode`'s splits: grid `(fold_rows, batch * heads_kv)`, a
/// block per folded row; warp `w` weighs splits `w, w + 4, ..` (each lane
/// `HEAD_DIM / 32` adjacent columns), and warp 0 combines the four through
/// shared memory. Split `s`'s output weighs `sum_s * 2^(max_s - max)` over
/// the weights' sum (splits that saw no key weigh 0 and are not
/// multiplied); O is stored as `Out`, the row's log-sum-exp where asked
/// for. A row no split saw is zeros (and `-inf`); a NaN statistic makes
/// its row NaN.
///
/// # Safety
/// `p` as the host made it for the `decode` launch before this one, with
/// `kv_splits > 1`; `DECODE_MERGE_THREADS` threads and
/// `decode_merge_smem_bytes(HEAD_DIM)` bytes of dynamic shared memory per
/// block (`kernels`).
#[inline(always)]
pub unsafe fn merge_splits<const HEAD_DIM: usize, const COLS: usize, Out: OutputFormat>(p: &AttnParams) {
    const { assert!(COLS * 32 == HEAD_DIM && COLS % 2 == 0) };
    let (row, head, _) = sreg::block_idx();
    let (warp, lane) = (sreg::warp_id(), sreg::lane_id());
    let layout = splits_of::<HEAD_DIM>(p);
    // SAFETY: every read of the partials follows.
    unsafe { grid_dep::wait() };
    let head = head as u64;
    // SAFETY: the partial results as the decode launch wrote them.
    let mine = unsafe { warp_merge::<HEAD_DIM, COLS>(p, &layout, (head, row), (warp, lane)) };
    // Warp w's slot: [base, total, lanes' columns].
    let slot = |w: u32| (smem::dynamic_smem_base() as *mut f32).wrapping_add((w * (2 + HEAD_DIM as u32)) as usize);
    // SAFETY: this warp's own slot; then the block meets.
    unsafe {
        let at = slot(warp);
        if lane == 0 {
            *at = mine.max;
            *at.add(1) = mine.total;
        }
        *(at.add(2 + (COLS as u32 * lane) as usize) as *mut [f32; COLS]) = mine.out;
        bar::sync_threads();
    }
    if warp != 0 {
        return;
    }
    // Warp 0: every warp's share against the largest maximum (a warp that
    // saw nothing weighs 0 and is skipped).
    // SAFETY: published slots.
    let maxima: [f32; MERGE_WARPS as usize] = core::array::from_fn(|w| unsafe { *slot(w as u32) });
    let max = maxima.iter().fold(f32::NEG_INFINITY, |m, &x| nan_max(m, x));
    let base = if max == f32::NEG_INFINITY { 0.0 } else { max };
    let mut out = [0f32; COLS];
    let mut total = 0f32;
    for (w, &m) in maxima.iter().enumerate() {
        // SAFETY: warp w's published slot.
        let sum = unsafe { *slot(w as u32).add(1) };
        if sum != 0.0 {
            let share = math::exp2(m - base);
            // SAFETY: warp w's published slot.
            let cols = unsafe { *(slot(w as u32).add(2 + (COLS as u32 * lane) as usize) as *const [f32; COLS]) };
            total += share * sum;
            for c in 0..COLS {
                out[c] += share * cols[c];
            }
        }
    }
    let scale = if total == 0.0 { 0.0 } else { math::rcp(total) };
    let at = (head * layout.fold_rows as u64 + row as u64) * HEAD_DIM as u64 + (COLS as u32 * lane) as u64;
    for c in 0..COLS / 2 {
        let packed = Out::pack2(out[2 * c] * scale, out[2 * c + 1] * scale);
        // SAFETY: two of the row's output columns (4-byte aligned: COLS is even).
        unsafe { *((p.o + 2 * (at + 2 * c as u64)) as *mut u32) = packed };
    }
    if p.lse != 0 && lane == 0 {
        let at = (head * layout.fold_rows as u64 + row as u64) as usize;
        // SAFETY: the row's entry of `[B, Hq, Sq]`.
        unsafe { *(p.lse as *mut f32).add(at) = lse_of(base, total) };
    }
}

/// The larger of `a` and `b`, NaN if either is (`f32::max` drops a NaN): a
/// split whose maximum is NaN (a NaN scale) makes its row NaN, as in every
/// kernel, instead of weighing 0.
#[inline(always)]
fn nan_max(a: f32, b: f32) -> f32 {
    if b > a || b.is_nan() { b } else { a }
}

/// Warp `warp`'s share of row `row` of folded head `head`: splits `warp,
/// warp + MERGE_WARPS, ..`, `MERGE_UNROLL` at a time, each batch's
/// statistics and partial rows loaded together (every lane the batch's
/// statistics, its own columns of the rows), so that a batch is one round
/// trip to L2. A lane's columns are weighed against the largest maximum
/// so far (what came before rescaled when a batch raises it) and not
/// normalized.
///
/// # Safety
/// The partial results as the decode launch wrote them.
#[inline(always)]
unsafe fn warp_merge<const HEAD_DIM: usize, const COLS: usize>(
    p: &AttnParams,
    layout: &DecodeSplits,
    (head, row): (u64, u32),
    (warp, lane): (u32, u32),
) -> WarpMerge<COLS> {
    // SAFETY (both closures): entries of the partial results (host-sized).
    let stats_of = |split: u32| unsafe { *((p.partials + layout.stats(head, split, row)) as *const [f32; 2]) };
    let part_of = |split: u32| unsafe {
        *((p.partials + layout.output(head, split, row) + 4 * (COLS as u32 * lane) as u64) as *const [f32; COLS])
    };
    // A split's maximum where it saw a key of the row, else `-inf`.
    let max_of = |[max, sum]: [f32; 2]| if sum == 0.0 { f32::NEG_INFINITY } else { max };
    let mut max = f32::NEG_INFINITY;
    let mut out = [0f32; COLS];
    let mut total = 0f32;
    let mut first = warp;
    while first < layout.splits {
        let at = |i: usize| first + MERGE_WARPS * i as u32;
        let live = |i: usize| at(i) < layout.splits;
        let stats: [[f32; 2]; MERGE_UNROLL] =
            core::array::from_fn(|i| if live(i) { stats_of(at(i)) } else { [0.0; 2] });
        let parts: [[f32; COLS]; MERGE_UNROLL] =
            core::array::from_fn(|i| if live(i) { part_of(at(i)) } else { [0.0; COLS] });
        let batch_max = stats.iter().fold(max, |m, &s| nan_max(m, max_of(s)));
        if max != f32::NEG_INFINITY && batch_max != max {
            // What came before, against the raised maximum.
            let rescale = math::exp2(max - batch_max);
            total *= rescale;
            out = out.map(|x| x * rescale);
        }
        max = batch_max;
        let base = if max == f32::NEG_INFINITY { 0.0 } else { max };
        for (&[split_max, sum], part) in stats.iter().zip(&parts) {
            let weight = if sum == 0.0 { 0.0 } else { sum * math::exp2(split_max - base) };
            total += weight;
            for c in 0..COLS {
                out[c] += if weight == 0.0 { 0.0 } else { weight * part[c] };
            }
        }
        first += MERGE_WARPS * MERGE_UNROLL as u32;
    }
    WarpMerge { max, total, out }
}
