//! What every tiled kernel does the same way: locate the block's rows and
//! heads, read the dequantization scales, and copy E4M3 rows into shared
//! memory with `cp.async`.

use crate::arch::{cp_async, grid_dep, shfl, sreg};
use crate::layout::RowLayout;
use crate::params::{self, AttnParams, KvTiles, PackedRows};
use crate::schedule;
use crate::softmax;

/// Where one block's tensors live and what it must do.
pub struct BlockJob {
    /// Q rows of the block (E4M3).
    pub q: *const u8,
    /// K of the block's key/value head (E4M3).
    pub k: *const u8,
    /// V of the block's key/value head (E4M3).
    pub v: *const u8,
    /// O rows of the block (f16 bits).
    pub o: *mut u16,
    /// The block's query head over the whole batch (`batch * heads_q +
    /// head`).
    pub q_head: u64,
    /// The block's key/value head over the whole batch (`batch * heads_kv
    /// + kv head`; in a packed batch the key/value head alone, the maps
    /// and the prepass's tiles running over every sequence).
    pub kv_head: u64,
    /// Bytes from one Q row to the next: `HEAD_DIM`, or in a packed batch
    /// `AttnParams::q_strides`' row stride.
    pub q_row_stride: u32,
    /// 16-bit elements from one O row to the next (and log-sum-exp
    /// entries times `HEAD_DIM`): `HEAD_DIM`, or `heads_q * HEAD_DIM` in a
    /// packed batch, whose O is dense.
    pub o_row_stride: u32,
    /// The block's sequence's query length.
    pub seq_q: u32,
    /// The block's sequence's key length.
    pub seq_kv: u32,
    /// The sequence's first row in K's tensor map (0 but in a packed
    /// batch, whose maps run over every sequence's rows).
    pub kv_row0: u32,
    /// The sequence's first tile in the prepass's scratch under its
    /// `kv_head` (`params::KvTiles`; 0 but in a packed batch).
    pub kv_tile0: u32,
    /// First query row of the block.
    pub row0: u32,
    /// Query rows of the block inside `seq_q`.
    pub rows: u32,
    /// Keys `key_begin .. key_end` are visited.
    pub key_begin: u32,
    /// See `key_begin`.
    pub key_end: u32,
    /// The factor from raw E4M3 dot products to base-2 scores.
    pub score_scale_log2: f32,
    /// V's dequantization scale.
    pub v_scale: f32,
}

impl BlockJob {
    /// Locates the block's rows and heads from the block indices and reads
    /// the scales, for `[batch, heads, seq, HEAD_DIM]` tensors.
    ///
    /// # Safety
    /// `p` describes valid buffers (host-validated).
    #[inline(always)]
    pub unsafe fn new<const HEAD_DIM: usize>(p: &AttnParams, block_m: u32) -> Self {
        let query_blocks = schedule::blocks(p.seq_q, block_m);
        let at = schedule::block_coords(sreg::block_idx(), query_blocks, p.causal != 0);
        // SAFETY: forwarded.
        unsafe { Self::locate::<HEAD_DIM>(p, block_m, at, None) }
    }

    /// [`BlockJob::new`] for a packed batch ([`AttnParams::cu_seqlens_q`])
    /// on a grid of `(heads_q, total_q / block_m + batch, 1)`: block `(h,
    /// x)` finds its sequence in the prefix sums ([`find_packed_sequence`]),
    /// its rows read from them, or without prefix sums among equal lengths
    /// ([`PackedRows::uniform`]); a block between two sequences' blocks
    /// gets none. The heads run side by side (the first wave holds every head's
    /// first blocks), and causal, a sequence's blocks run its last
    /// (heaviest) query block first.
    ///
    /// # Safety
    /// As [`BlockJob::new`]; the prefix sums hold `batch + 1` entries.
    #[inline(always)]
    pub unsafe fn new_packed<const HEAD_DIM: usize>(p: &AttnParams, block_m: u32) -> Self {
        let (head, x, _) = sreg::block_idx();
        let (cu_q, cu_k) = (p.cu_seqlens_q as *const u32, p.cu_seqlens_k as *const u32);
        // SAFETY: the first global memory access of the block (the kernel
        // before this one may still write its inputs); entries `0 ..=
        // batch` exist where there are prefix sums; every warp converged.
        let (batch, rows) = unsafe {
            grid_dep::wait();
            let uniform = cu_q.is_null();
            let row0 = |b: u32| if uniform { PackedRows::uniform(p, b).q_row0 } else { *cu_q.add(b as usize) };
            // The sequence and its rows as warp-uniform values
            // (`shfl::uniform`): every lane finds and loads the same ones,
            // but `ptxas` cannot tell, and would compute everything the key
            // loop derives from them per lane.
            let batch = shfl::uniform(find_packed_sequence(row0, p.batch, block_m, x));
            let rows = if uniform {
                PackedRows::uniform(p, batch)
            } else {
                let pair = |cu: *const u32| [*cu.add(batch as usize), *cu.add(batch as usize + 1)];
                PackedRows::of(p, pair(cu_q), pair(cu_k))
            };
            (batch, rows.map(|x| shfl::uniform(x)))
        };
        // The block's place among its sequence's blocks (`blocks`: none of
        // them where it lies between two sequences').
        let (first, blocks) =
            (schedule::first_packed_block(rows.q_row0, batch, block_m), schedule::blocks(rows.seq_q, block_m));
        let nth = x.wrapping_sub(first);
        let query_block = if nth >= blocks {
            blocks
        } else if p.causal != 0 {
            blocks - 1 - nth
        } else {
            nth
        };
        let at = schedule::BlockCoords { query_block, head, batch };
        // SAFETY: forwarded.
        unsafe { Self::locate::<HEAD_DIM>(p, block_m, at, Some(rows)) }
    }

    /// The job of the block at `at` (query block, head, batch entry), its
    /// sequence's rows where packed.
    ///
    /// # Safety
    /// As [`BlockJob::new`].
    #[inline(always)]
    unsafe fn locate<const HEAD_DIM: usize>(
        p: &AttnParams,
        block_m: u32,
        at: schedule::BlockCoords,
        packed: Option<PackedRows>,
    ) -> Self {
        let (head, batch) = (at.head, at.batch as u64);
        let row0 = at.query_block * block_m;
        let kv_head = p.kv_group.div(head);
        let d = HEAD_DIM as u64;
        let q_head = batch * p.heads_q as u64 + head as u64;
        let batch_kv_head = batch * p.heads_kv as u64 + kv_head as u64;
        let seq = match packed {
            Some(rows) => rows,
            None => PackedRows { q_row0: 0, seq_q: p.seq_q, kv_row0: 0, seq_kv: p.seq_kv },
        };
        let (q_offset, o_offset, q_row_stride, o_row_stride, kv_offset, kv_head_index) = match packed {
            None => {
                let offset = (q_head * p.seq_q as u64 + row0 as u64) * d;
                (offset, offset, HEAD_DIM as u32, HEAD_DIM as u32, batch_kv_head * p.seq_kv as u64 * d, batch_kv_head)
            }
            Some(rows) => {
                let q_row = rows.q_row0 + row0;
                (
                    p.q_strides.offset(q_row, head),
                    (q_row as u64 * p.heads_q as u64 + head as u64) * d,
                    p.q_strides.row,
                    p.heads_q * HEAD_DIM as u32,
                    p.kv_strides.offset(rows.kv_row0, kv_head),
                    kv_head as u64,
                )
            }
        };
        // SAFETY: the first global memory access of the block (the kernel
        // before this one may still write its inputs or read its output).
        unsafe { grid_dep::wait() };
        // The scales are loaded here, before any tile copy: an SM's loads
        // return in about issue order, so behind a block's 34 KB of copies
        // they would delay the first softmax (`split` measured slower with
        // them read after the prologue copies, see lab/).
        let (q_index, kv_index) = params::scale_index(p.scale_batch_stride, at.batch, head, kv_head);
        // SAFETY: the scale arrays hold these entries in the layout
        // `scale_batch_stride` names (host-validated).
        let (q_scale, k_scale, v_scale) = unsafe {
            (
                *(p.q_scale as *const f32).add(q_index as usize),
                *(p.k_scale as *const f32).add(kv_index as usize),
                *(p.v_scale as *const f32).add(kv_index as usize),
            )
        };
        // (Dense, every block's first row lies inside the sequence.)
        let rows = match packed {
            None => block_m.min(p.seq_q - row0),
            Some(_) => block_m.min(seq.seq_q.saturating_sub(row0)),
        };
        let causal = p.causal != 0;
        let key_end = match (packed, rows) {
            (Some(_), 0) => 0,
            _ => schedule::key_end(row0, block_m, seq.seq_q, seq.seq_kv, causal),
        };
        BlockJob {
            q: (p.q + q_offset) as *const u8,
            k: (p.k + kv_offset) as *const u8,
            v: (p.v + kv_offset) as *const u8,
            o: (p.o + 2 * o_offset) as *mut u16,
            q_head,
            kv_head: kv_head_index,
            q_row_stride,
            o_row_stride,
            seq_q: seq.seq_q,
            seq_kv: seq.seq_kv,
            kv_row0: seq.kv_row0,
            kv_tile0: if packed.is_some() { KvTiles::first_packed_tile(seq.kv_row0, at.batch) } else { 0 },
            row0,
            rows,
            key_begin: 0,
            key_end,
            score_scale_log2: softmax::score_scale_log2(p.softmax_scale, q_scale, k_scale),
            v_scale,
        }
    }

    /// Where the log-sum-exp of the block's first row goes, if `p` asks
    /// for one, and the entries from one row to the next: the entry of an
    /// output row has the row's index, so the log-sum-exp is `[batch,
    /// heads_q, seq_q]`, or packed `[total_q, heads_q]`. Derived from the
    /// output pointer (live to the end anyway) rather than kept from
    /// [`BlockJob::new`]: one more register through the key loop costs
    /// the `wgmma` kernels their occupancy.
    #[inline(always)]
    pub fn lse_entries<const HEAD_DIM: usize>(&self, p: &AttnParams) -> Option<(*mut f32, u32)> {
        if p.lse == 0 {
            return None;
        }
        let row = (self.o as u64 - p.o) / (2 * HEAD_DIM as u64);
        Some(((p.lse as *mut f32).wrapping_add(row as usize), self.o_row_stride / HEAD_DIM as u32))
    }

    /// Writes `-inf` (no key seen) as the log-sum-exp of the block's rows
    /// at `(lse, step)` ([`BlockJob::lse_entries`]).
    ///
    /// # Safety
    /// `lse` holds the block's `rows` entries, `step` apart.
    #[inline(always)]
    pub unsafe fn no_keys_lse(&self, (lse, step): (*mut f32, u32), threads: u32) {
        let mut row = sreg::thread_idx_x();
        while row < self.rows {
            // SAFETY: one of the block's entries.
            unsafe { *lse.add((row * step) as usize) = f32::NEG_INFINITY };
            row += threads;
        }
    }

    /// What a block whose rows see no key writes: zeros over its output
    /// rows, and `-inf` as their log-sum-exp where one is asked for.
    ///
    /// # Safety
    /// As [`BlockJob::zero_output`] and [`BlockJob::no_keys_lse`] (the
    /// log-sum-exp buffer as the host made it).
    #[inline(always)]
    pub unsafe fn no_keys<const HEAD_DIM: usize>(&self, p: &AttnParams, threads: u32) {
        // SAFETY: the caller's contract.
        unsafe {
            self.zero_output::<HEAD_DIM>(threads);
            if let Some(lse) = self.lse_entries::<HEAD_DIM>(p) {
                self.no_keys_lse(lse, threads);
            }
        }
    }

    /// Writes zeros over the block's output rows (for blocks whose rows see
    /// no key).
    ///
    /// # Safety
    /// `self.o` points at `rows` output rows of `HEAD_DIM` f16,
    /// `o_row_stride` apart.
    #[inline(always)]
    pub unsafe fn zero_output<const HEAD_DIM: usize>(&self, threads: u32) {
        let words_per_row = HEAD_DIM as u32 / 2;
        let mut c = sreg::thread_idx_x();
        while c < self.rows * words_per_row {
            let (row, word) = (c / words_per_row, c % words_per_row);
            let at = (row * self.o_row_stride / 2 + word) as usize;
            // SAFETY: inside the block's output rows (4-byte aligned: D and
            // the stride are even).
            unsafe { *(self.o as *mut u32).add(at) = 0 };
            c += threads;
        }
    }
}

/// How a kernel's tensors hold the batch's sequences: a kernel's policy,
/// one PTX entry each (the packed job's lengths and strides live in
/// registers the dense one reads from the parameters, which the `wgmma`
/// kernels' register budgets do not have room for in one entry).
pub trait Sequences {
    /// The block's job ([`BlockJob::new`] at `block_m` rows).
    ///
    /// # Safety
    /// As [`BlockJob::new`], and the layout's own contract.
    unsafe fn job<const HEAD_DIM: usize>(p: &AttnParams, block_m: u32) -> BlockJob;
}

/// `[batch, heads, seq, HEAD_DIM]` tensors, every sequence `seq_q` and
/// `seq_kv` long.
pub struct Dense;

/// A packed batch of sequences of their own lengths
/// ([`AttnParams::cu_seqlens_q`]).
pub struct Packed;

impl Sequences for Dense {
    #[inline(always)]
    unsafe fn job<const HEAD_DIM: usize>(p: &AttnParams, block_m: u32) -> BlockJob {
        // SAFETY: forwarded.
        unsafe { BlockJob::new::<HEAD_DIM>(p, block_m) }
    }
}

impl Sequences for Packed {
    #[inline(always)]
    unsafe fn job<const HEAD_DIM: usize>(p: &AttnParams, block_m: u32) -> BlockJob {
        // SAFETY: forwarded (the host gives packed kernels the prefix sums).
        unsafe { BlockJob::new_packed::<HEAD_DIM>(p, block_m) }
    }
}

/// The packed sequence that block `x` of a grid over every sequence's
/// blocks of `block` rows works for ([`schedule::packed_sequence`]), where
/// sequence `b` starts at row `row0(b)` (a prefix sum): each round's 32
/// candidates read by the warp's lanes at once and voted on.
///
/// # Safety
/// Converged warp; `row0` may be called with any `b < batch`.
#[inline(always)]
pub unsafe fn find_packed_sequence(row0: impl Fn(u32) -> u32, batch: u32, block: u32, x: u32) -> u32 {
    let lane = sreg::lane_id();
    schedule::packed_sequence(batch, |low, step| {
        let b = low + lane * step;
        let starts = b < batch && schedule::first_packed_block(row0(b), b, block) <= x;
        // SAFETY: converged warp (the caller's contract).
        unsafe { shfl::ballot(starts) }
    })
}

/// A tile of rows to copy from global into shared memory.
#[derive(Clone, Copy)]
pub struct RowCopy {
    /// Shared-window address of the destination tile.
    pub dst: u32,
    /// The destination tile's layout.
    pub layout: RowLayout,
    /// First source row.
    pub src: *const u8,
    /// Bytes from one source row to the next (`row_bytes` where the rows
    /// follow each other).
    pub src_stride: u32,
    /// Bytes per row (a multiple of 16).
    pub row_bytes: u32,
    /// Rows of the tile.
    pub rows: u32,
    /// Rows that exist in the source; the rest are zero-filled.
    pub valid_rows: u32,
}

impl RowCopy {
    /// Issues the `cp.async` copies (16 bytes each), spread over the
    /// `threads` threads that call it together, this one being number
    /// `thread` of them; rows at or past `valid_rows` are zero-filled
    /// without reading global memory.
    ///
    /// # Safety
    /// Uniform over the calling threads; source rows below `valid_rows`
    /// readable; the tile inside the block's shared memory, 16-byte aligned.
    #[inline(always)]
    pub unsafe fn issue(&self, thread: u32, threads: u32) {
        let chunks = self.rows * (self.row_bytes / 16);
        let mut c = thread;
        while c < chunks {
            // SAFETY: forwarded; c < chunks.
            unsafe { self.copy_chunk(c) };
            c += threads;
        }
    }

    /// As [`RowCopy::issue`], as a counted loop (each thread's share rounded
    /// up, then a bounds check): with the tile and the thread count known
    /// at compile time it unrolls into straight-line copies, where the
    /// `while` loop of `issue` stays a loop (a branch per copy, and each
    /// copy's address registers reused by the next, which a profile of
    /// `split` showed as a tenth of its warp samples). It costs registers
    /// (`wgmma` D=128 would no longer fit the register file) and measured
    /// faster only for `mma` at D=128, so kernels opt in ([`Unrolled`];
    /// see lab/).
    ///
    /// # Safety
    /// As [`RowCopy::issue`].
    #[inline(always)]
    pub unsafe fn issue_unrolled(&self, thread: u32, threads: u32) {
        let chunks = self.rows * (self.row_bytes / 16);
        for i in 0..chunks.div_ceil(threads) {
            let c = thread + i * threads;
            if c < chunks {
                // SAFETY: forwarded; c < chunks.
                unsafe { self.copy_chunk(c) };
            }
        }
    }

    /// Copies chunk `c` (16 bytes: row `c / chunks per row`).
    ///
    /// # Safety
    /// As [`RowCopy::issue`]; `c < rows * row_bytes / 16`.
    #[inline(always)]
    unsafe fn copy_chunk(&self, c: u32) {
        let chunks_per_row = self.row_bytes / 16;
        let r = c / chunks_per_row;
        let col = (c % chunks_per_row) * 16;
        let valid = r < self.valid_rows;
        let from =
            if valid { self.src.wrapping_add(r as usize * self.src_stride as usize + col as usize) } else { self.src };
        // SAFETY: in-bounds source when valid; 16-byte aligned destination.
        unsafe { cp_async::copy_16_zfill(self.dst + self.layout.offset(r, col), from, if valid { 16 } else { 0 }) };
    }
}

/// How a thread issues its share of a [`RowCopy`]: a kernel's policy.
pub trait CopyLoop {
    /// Issues this thread's copies of `copy` (thread `thread` of `threads`).
    ///
    /// # Safety
    /// As [`RowCopy::issue`].
    unsafe fn issue(copy: &RowCopy, thread: u32, threads: u32);
}

/// [`RowCopy::issue`]: a loop, the fewest registers.
pub struct Rolled;

/// [`RowCopy::issue_unrolled`]: straight-line copies, more registers.
pub struct Unrolled;

impl CopyLoop for Rolled {
    #[inline(always)]
    unsafe fn issue(copy: &RowCopy, thread: u32, threads: u32) {
        // SAFETY: forwarded.
        unsafe { copy.issue(thread, threads) }
    }
}

impl CopyLoop for Unrolled {
    #[inline(always)]
    unsafe fn issue(copy: &RowCopy, thread: u32, threads: u32) {
        // SAFETY: forwarded.
        unsafe { copy.issue_unrolled(thread, threads) }
    }
}

/// Copies `rows` E4M3 rows of `HEAD_DIM` bytes (a Q, K or V tile) from `src`
/// into the shared tile at `dst` laid out as `layout` (see [`RowCopy`]), by
/// thread `thread` of the `threads` that call it together, issued as `L`
/// says.
///
/// # Safety
/// As [`RowCopy::issue`].
#[inline(always)]
pub unsafe fn load_rows<const HEAD_DIM: usize, L: CopyLoop>(
    dst: u32,
    layout: RowLayout,
    src: *const u8,
    rows: u32,
    valid_rows: u32,
    (thread, threads): (u32, u32),
) {
    // SAFETY: forwarded.
    unsafe {
        load_rows_strided::<HEAD_DIM, L>(dst, layout, (src, HEAD_DIM as u32), rows, valid_rows, (thread, threads))
    }
}

/// [`load_rows`] from source rows `stride` bytes apart (`(src, stride)`).
///
/// # Safety
/// As [`RowCopy::issue`].
#[inline(always)]
pub unsafe fn load_rows_strided<const HEAD_DIM: usize, L: CopyLoop>(
    dst: u32,
    layout: RowLayout,
    (src, src_stride): (*const u8, u32),
    rows: u32,
    valid_rows: u32,
    (thread, threads): (u32, u32),
) {
    let copy = RowCopy { dst, layout, src, src_stride, row_bytes: HEAD_DIM as u32, rows, valid_rows };
    // SAFETY: forwarded.
    unsafe { L::issue(&copy, thread, threads) }
}
