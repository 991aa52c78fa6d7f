//! What every tiled kernel does the same way: locate the block's rows and
//! heads, read the dequantization scales, and copy E4M3 rows into shared
//! memory with `cp.async`.

use crate::arch::{cp_async, grid_dep, sreg};
use crate::layout::RowLayout;
use crate::params::{self, AttnParams};
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
    /// + kv head`).
    pub kv_head: u64,
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
    /// the scales.
    ///
    /// # Safety
    /// `p` describes valid buffers (host-validated).
    #[inline(always)]
    pub unsafe fn new<const HEAD_DIM: usize>(p: &AttnParams, block_m: u32) -> Self {
        let query_blocks = schedule::blocks(p.seq_q, block_m);
        let at = schedule::block_coords(sreg::block_idx(), query_blocks, p.causal != 0);
        let (head, batch) = (at.head, at.batch as u64);
        let row0 = at.query_block * block_m;
        let kv_head = p.kv_group.div(head);
        let d = HEAD_DIM as u64;
        let q_head = batch * p.heads_q as u64 + head as u64;
        let q_offset = (q_head * p.seq_q as u64 + row0 as u64) * d;
        let batch_kv_head = batch * p.heads_kv as u64 + kv_head as u64;
        let kv_offset = batch_kv_head * p.seq_kv as u64 * d;
        // SAFETY: the first global memory access of the block follows (the
        // kernel before this one may still write its inputs or read its output).
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
        BlockJob {
            q: (p.q + q_offset) as *const u8,
            k: (p.k + kv_offset) as *const u8,
            v: (p.v + kv_offset) as *const u8,
            o: (p.o + 2 * q_offset) as *mut u16,
            q_head,
            kv_head: batch_kv_head,
            row0,
            rows: block_m.min(p.seq_q - row0),
            key_begin: 0,
            key_end: schedule::key_end(row0, block_m, p.seq_q, p.seq_kv, p.causal != 0),
            score_scale_log2: softmax::score_scale_log2(p.softmax_scale, q_scale, k_scale),
            v_scale,
        }
    }

    /// Writes zeros over the block's output rows (for blocks whose rows see
    /// no key).
    ///
    /// # Safety
    /// `self.o` points at `rows` output rows of `HEAD_DIM` f16.
    #[inline(always)]
    pub unsafe fn zero_output<const HEAD_DIM: usize>(&self, threads: u32) {
        let mut c = sreg::thread_idx_x();
        while c < self.rows * HEAD_DIM as u32 / 2 {
            // SAFETY: inside the block's output rows (4-byte aligned: D is even).
            unsafe { *(self.o as *mut u32).add(c as usize) = 0 };
            c += threads;
        }
    }
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
