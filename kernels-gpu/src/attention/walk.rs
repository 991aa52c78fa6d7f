//! Which query rows and keys a `split`-family block owns, and where its
//! results go: the key walk, a kernel's policy. [`FullRows`] is the
//! prefill walk (one head's rows, every key they see, O stored as the
//! output type); [`WindowRows`] the same under a key window, perhaps
//! with capped scores ([`ScoreKeys`]); `super::decode::Decode` folds a
//! key/value head's query heads into one block's rows and splits the keys
//! across blocks.

use super::block::BlockJob;
use super::merge::MergeArea;
use super::output::OutputFormat;
use crate::arch::math;
use crate::layout::RowLayout;
use crate::params::{self, AttnParams};
use crate::schedule;
use crate::softmax;
use crate::window;
use core::marker::PhantomData;

/// Which keys a row sees and what its scores are: a walk's policy
/// ([`WindowRows`], `super::decode::Decode`).
pub trait ScoreKeys {
    /// Whether a key window (`AttnParams::window_left`, `window_right`,
    /// causal masking folded in by the host) limits them.
    const WINDOWED: bool;
    /// Whether the scores are capped (`AttnParams::softcap`): each becomes
    /// `tanh` of the raw dot product times `window::softcap_input_scale`
    /// of its row's score factor, which the softmax scales by
    /// `window::softcap_score_factor`.
    const CAPPED: bool;
}

/// Every key, or causal masking (`AttnParams::causal`).
pub struct AllKeys;

/// The keys of the launch's window (bottom-right aligned to the keys, as
/// causal masking).
pub struct WindowedKeys;

/// [`WindowedKeys`] with capped scores.
pub struct CappedKeys;

impl ScoreKeys for AllKeys {
    const WINDOWED: bool = false;
    const CAPPED: bool = false;
}

impl ScoreKeys for WindowedKeys {
    const WINDOWED: bool = true;
    const CAPPED: bool = false;
}

impl ScoreKeys for CappedKeys {
    const WINDOWED: bool = true;
    const CAPPED: bool = true;
}

/// Where a key block's K and V rows lie: for tensor copies, the row and
/// head coordinates in K's and V's maps; for `cp.async`, the first rows'
/// addresses, the bytes from one row to the next and how many rows exist
/// (the rest are zero-filled).
#[derive(Clone, Copy)]
pub struct KeyRows {
    /// The first row's coordinate along the maps' rows.
    pub row: u32,
    /// The coordinate along the maps' heads.
    pub head: u32,
    /// The first K row.
    pub k: *const u8,
    /// The first V row.
    pub v: *const u8,
    /// Bytes from one row to the next.
    pub stride: u32,
    /// Rows that exist.
    pub valid: u32,
}

impl KeyRows {
    /// The key block of `block_n` keys from `key0` of a head whose K and V
    /// rows are contiguous (`job.k`, `job.v`), its maps' head `job.kv_head`.
    #[inline(always)]
    pub fn contiguous<const HEAD_DIM: usize>(p: &AttnParams, job: &BlockJob, key0: u32, block_n: u32) -> KeyRows {
        let offset = key0 as usize * HEAD_DIM;
        KeyRows {
            row: key0,
            head: job.kv_head as u32,
            k: job.k.wrapping_add(offset),
            v: job.v.wrapping_add(offset),
            stride: HEAD_DIM as u32,
            valid: (p.seq_kv - key0).min(block_n),
        }
    }
}

/// A `split` block's walk: its job, its rows' geometry, the scores'
/// per-row factors and the store of its merged rows. (`mma`'s body takes
/// a walk's job, rows and score shaping, and stores its rows itself.)
pub trait Walk {
    /// What a thread keeps of its two rows for the key loop.
    type ThreadRows: Copy;

    /// Whether the walk may start at a key block rotated by the query
    /// block (`schedule::walks_rotated` says which kernels do).
    const ROTATES: bool;

    /// Locates the block's rows, heads and keys (`key_begin .. key_end`,
    /// walked in key blocks of `block_n` from `key_begin`) and reads its
    /// scales, for blocks of `block_m` rows.
    ///
    /// # Safety
    /// `p` describes valid buffers (host-validated) and the walk's grid.
    unsafe fn job<const HEAD_DIM: usize>(p: &AttnParams, tile: (u32, u32)) -> BlockJob;

    /// Where the key block of `block_n` keys from `key0` lies (prefill's:
    /// the head's contiguous rows).
    ///
    /// # Safety
    /// `job` from [`Walk::job`]; the key block is the walk's.
    #[inline(always)]
    unsafe fn key_rows<const HEAD_DIM: usize>(p: &AttnParams, job: &BlockJob, key0: u32, block_n: u32) -> KeyRows {
        KeyRows::contiguous::<HEAD_DIM>(p, job, key0, block_n)
    }

    /// What a block whose rows see none of its keys writes (prefill's:
    /// zeros over its output rows, `-inf` as their log-sum-exp where one is
    /// asked for).
    ///
    /// # Safety
    /// Uniform over the block (`threads` threads); `job` from [`Walk::job`].
    #[inline(always)]
    unsafe fn no_keys<const HEAD_DIM: usize>(p: &AttnParams, job: &BlockJob, threads: u32) {
        // SAFETY: the block's own output rows and log-sum-exp entries.
        unsafe { job.no_keys::<HEAD_DIM>(p, threads) }
    }

    /// This thread's two rows, `local_rows` of the block (its first row
    /// and that row + 8), with its first column `col`.
    ///
    /// # Safety
    /// `job` from [`Walk::job`] with the same parameters.
    unsafe fn thread_rows(p: &AttnParams, job: &BlockJob, local_rows: [u32; 2], col: u32) -> Self::ThreadRows;

    /// Brings the raw scores of the key block of `block_n` keys from
    /// `key0` (`S_TILES` accumulator tiles) to the block's common score
    /// factor (`BlockJob::score_scale_log2`), masking them here if the
    /// walk masks its own.
    fn prepare_scores<const S_TILES: usize>(s: &mut [[f32; 4]; S_TILES], rows: &Self::ThreadRows, key0: u32);

    /// Before P·V of the key block from `key0`, once its V tile (`block_n`
    /// rows at the generic address `v_tile`, laid out as `layout`) landed:
    /// clears what must not reach the product (prefill's: nothing, the
    /// rows past the keys arrive as zeros). The whole key group calls it;
    /// a walk that clears runs key groups of one warp.
    ///
    /// # Safety
    /// Converged warp; the tile is this group's and has landed.
    #[inline(always)]
    unsafe fn prepare_values<const HEAD_DIM: usize>(
        _v_tile: *mut u8,
        _layout: RowLayout,
        _key0: u32,
        _block_n: u32,
        _rows: &Self::ThreadRows,
    ) {
    }

    /// Whether the softmax must mask the key block of `block_n` keys from
    /// `key0` with the block's tile geometry (`online::MaskGeometry`): the
    /// block may hide a key from some row, and the walk leaves masking to
    /// the softmax.
    fn needs_mask(p: &AttnParams, job: &BlockJob, key0: u32, block_n: u32) -> bool;

    /// Stores this thread's part of the block's merged rows: `slice`
    /// holds the (normalized, dequantized) output tiles `tile0 ..` (pairs
    /// of even and odd columns, see `split::o_column`) of its two rows
    /// `local_rows`; `merge` (the area, the dynamic shared memory base)
    /// holds every key group's row statistics; `thread` is `(key group,
    /// quad)`: the thread is lane `4 * g + quad` of a warp of that group.
    /// Prefill's: O's rows as the output type ([`store_tile_pairs`]) and,
    /// where asked, their log-sum-exp from the merged statistics (by the
    /// rows' quad lane 0 of the first key group).
    ///
    /// # Safety
    /// `smem` the dynamic shared memory base with the merge's statistics
    /// published; `job` from [`Walk::job`]; `SLICE` even.
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
        // SAFETY: forwarded.
        unsafe { store_tile_pairs::<HEAD_DIM, SLICE, Out>(job, slice, tile0, local_rows, quad) };
        if let Some((lse, step)) = job.lse_entries::<HEAD_DIM>(p)
            && key_group == 0
            && quad == 0
        {
            // SAFETY: the merge's statistics are published (the caller's contract).
            let stats = unsafe { merge.row_stats::<SPLITS>(smem, local_rows) };
            for h in 0..2 {
                if local_rows[h] < job.rows {
                    let [base, sum] = stats[h];
                    let value = softmax::log_sum_exp(base, sum, math::log2);
                    // SAFETY: one of the block's log-sum-exp entries.
                    unsafe { *lse.add((local_rows[h] * step) as usize) = value };
                }
            }
        }
    }
}

/// The prefill walk: a block owns `block_m` rows of one query head and
/// walks every key they see; O is stored as the output type.
pub struct FullRows;

/// Four adjacent 16-bit output columns of a row, written as one 8-byte
/// store (as `[u32; 2]` LLVM knows only 4-byte alignment and writes two
/// words).
#[repr(C, align(8))]
pub struct FourColumns(pub [u32; 2]);

/// Stores this thread's four adjacent columns of each of its two rows
/// from a slice's tile pairs (`Out`-rounded), rows at or past `job.rows`
/// skipped: tiles `2p, 2p + 1` of the slice hold the even and the odd
/// columns of one 16-column half.
///
/// # Safety
/// `job.o` points at the block's `job.rows` output rows of `HEAD_DIM`
/// 16-bit elements.
#[inline(always)]
pub unsafe fn store_tile_pairs<const HEAD_DIM: usize, const SLICE: usize, Out: OutputFormat>(
    job: &BlockJob,
    slice: &[[f32; 4]; SLICE],
    tile0: u32,
    local_rows: [u32; 2],
    quad: u32,
) {
    for_four_columns(slice, tile0, local_rows, job.rows, quad, |row, col, [a, b, c, d]| {
        let packed = FourColumns([Out::pack2(a, b), Out::pack2(c, d)]);
        // SAFETY: row < job.rows, col + 3 < HEAD_DIM: inside the block's output rows; 8-byte aligned.
        unsafe { *(job.o.add((row * HEAD_DIM as u32 + col) as usize) as *mut FourColumns) = packed };
    });
}

/// Calls `f(row, col, values)` with this thread's four adjacent columns
/// `col ..` of each of its rows `local_rows` below `rows`, as a slice's
/// tile pairs hold them (tiles `2p, 2p + 1`: the even and the odd columns
/// of one 16-column half; see `split::o_column`), `tile0` the slice's
/// first tile.
#[inline(always)]
pub fn for_four_columns<const SLICE: usize>(
    slice: &[[f32; 4]; SLICE],
    tile0: u32,
    local_rows: [u32; 2],
    rows: u32,
    quad: u32,
    mut f: impl FnMut(u32, u32, [f32; 4]),
) {
    for pair in 0..SLICE / 2 {
        let (even, odd) = (&slice[2 * pair], &slice[2 * pair + 1]);
        let col = super::split::o_column(tile0 + 2 * pair as u32, 2 * quad);
        for h in 0..2 {
            let row = local_rows[h];
            if row < rows {
                let e = 2 * h;
                f(row, col, [even[e], odd[e], even[e + 1], odd[e + 1]]);
            }
        }
    }
}

impl Walk for FullRows {
    type ThreadRows = ();

    const ROTATES: bool = true;

    #[inline(always)]
    unsafe fn job<const HEAD_DIM: usize>(p: &AttnParams, (block_m, _): (u32, u32)) -> BlockJob {
        // SAFETY: forwarded.
        unsafe { BlockJob::new::<HEAD_DIM>(p, block_m) }
    }

    #[inline(always)]
    unsafe fn thread_rows(_p: &AttnParams, _job: &BlockJob, _local_rows: [u32; 2], _col: u32) {}

    #[inline(always)]
    fn prepare_scores<const S_TILES: usize>(_s: &mut [[f32; 4]; S_TILES], _rows: &(), _key0: u32) {}

    #[inline(always)]
    fn needs_mask(p: &AttnParams, job: &BlockJob, key0: u32, block_n: u32) -> bool {
        schedule::block_needs_mask(job.row0, key0, block_n, p.seq_q, p.seq_kv, p.causal != 0)
    }
}

/// The prefill walk under the launch's key window (`AttnParams::window`,
/// causal masking folded in by the host), its scores capped where `K`
/// says: a block walks the key blocks from the one holding the first key
/// any of its rows sees (`KeyWindow::key_range`) to the last such key, and
/// masks the keys outside each row's window itself
/// ([`Walk::prepare_scores`]). Not rotated: the walk's keys differ by
/// query block already.
pub struct WindowRows<K: ScoreKeys>(PhantomData<K>);

/// What a thread of a [`WindowRows`] block keeps of its two rows.
#[derive(Clone, Copy)]
pub struct WindowedRows {
    /// Each row sees the keys from this on (its window's first key).
    key_starts: [i32; 2],
    /// Each row sees the keys below this (its window's end, or the keys').
    key_limits: [i32; 2],
    /// The keys from this on need no mask in any row of the block at their
    /// start (the block's last row's first key).
    unmasked_begin: u32,
    /// The keys below this need no mask in any row of the block (its first
    /// row's limit).
    unmasked_end: u32,
    /// Capped: the factor from a raw dot product to its `tanh`'s argument.
    to_tanh: f32,
    /// The first column of the thread in each 8-key accumulator tile.
    col: u32,
}

impl<K: ScoreKeys> Walk for WindowRows<K> {
    type ThreadRows = WindowedRows;

    const ROTATES: bool = false;

    #[inline(always)]
    unsafe fn job<const HEAD_DIM: usize>(p: &AttnParams, (block_m, block_n): (u32, u32)) -> BlockJob {
        // SAFETY: forwarded.
        let mut job = unsafe { BlockJob::new::<HEAD_DIM>(p, block_m) };
        let (begin, end) = p.window().key_range(job.row0, block_m, job.seq_q, job.seq_kv);
        (job.key_begin, job.key_end) = (begin - begin % block_n, end);
        if K::CAPPED {
            job.score_scale_log2 = window::softcap_score_factor(p.softcap);
        }
        job
    }

    #[inline(always)]
    unsafe fn thread_rows(p: &AttnParams, job: &BlockJob, local_rows: [u32; 2], col: u32) -> WindowedRows {
        let (window, seq_q, seq_kv) = (p.window(), job.seq_q, job.seq_kv);
        let limit = |row: u32| (window.last_key(row, seq_q, seq_kv) + 1).min(seq_kv as i32);
        let rows = local_rows.map(|r| job.row0 + r);
        let to_tanh = if K::CAPPED {
            // The block's score factor before capping, from its scales.
            let batch = job.q_head as u32 / p.heads_q;
            let head = job.q_head as u32 - batch * p.heads_q;
            let (q_index, kv_index) = params::scale_index(p.scale_batch_stride, batch, head, p.kv_group.div(head));
            // SAFETY: the scale arrays hold these entries (host-validated).
            let (q_scale, k_scale) = unsafe {
                (*(p.q_scale as *const f32).add(q_index as usize), *(p.k_scale as *const f32).add(kv_index as usize))
            };
            window::softcap_input_scale(softmax::score_scale_log2(p.softmax_scale, q_scale, k_scale), p.softcap)
        } else {
            1.0
        };
        WindowedRows {
            key_starts: rows.map(|row| window.first_key(row, seq_q, seq_kv)),
            key_limits: rows.map(limit),
            unmasked_begin: window.first_key(job.row0 + job.rows - 1, seq_q, seq_kv).max(0) as u32,
            unmasked_end: limit(job.row0).max(0) as u32,
            to_tanh,
            col,
        }
    }

    /// The scores, capped where `K` says (every score first: one loop
    /// each, which keeps 64-key blocks' scores in registers); then, where
    /// the block may hide a key from a row (before its last row's first
    /// key or past its first row's limit), `-inf` for each row's keys
    /// outside its window.
    #[inline(always)]
    fn prepare_scores<const S_TILES: usize>(s: &mut [[f32; 4]; S_TILES], rows: &WindowedRows, key0: u32) {
        if K::CAPPED {
            for tile in s.iter_mut() {
                for x in tile.iter_mut() {
                    *x = math::tanh(*x * rows.to_tanh);
                }
            }
        }
        if key0 >= rows.unmasked_begin && key0 + 8 * S_TILES as u32 <= rows.unmasked_end {
            return;
        }
        for (t, tile) in s.iter_mut().enumerate() {
            for (e, x) in tile.iter_mut().enumerate() {
                let key = (key0 + 8 * t as u32 + rows.col + e as u32 % 2) as i32;
                let seen = key >= rows.key_starts[e / 2] && key < rows.key_limits[e / 2];
                if !seen {
                    *x = f32::NEG_INFINITY;
                }
            }
        }
    }

    /// Never: [`WindowRows::prepare_scores`] masks the rows itself.
    #[inline(always)]
    fn needs_mask(_: &AttnParams, _: &BlockJob, _: u32, _: u32) -> bool {
        false
    }
}
