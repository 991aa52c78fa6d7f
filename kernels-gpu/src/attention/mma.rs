//! `mma`: flash-style tiled attention on `mma.sync`.
//!
//! A block owns `BLOCK_M = 16 * WARPS` query rows of one (batch, head); warp
//! `w` owns rows `16w .. 16w + 15`. The key loop walks `BLOCK_N`-key blocks:
//!
//! 1. K and V (E4M3) arrive in shared memory by `cp.async`, `STAGES` buffers
//!    deep, so block `j + STAGES - 1` loads while block `j` computes;
//! 2. `S = Q·K^T` on `mma.m16n8k32.e4m3` (Q fragments stay in registers);
//! 3. online softmax straight on the accumulators, in base 2, with the
//!    dequantization scales of Q and K folded into one factor;
//! 4. `O += P·V` on `mma.m16n8k16.f16`: the accumulator layout of S *is* the
//!    A-operand layout, so P never leaves registers; V is converted once per
//!    block from E4M3 to f16 in shared memory (exact) and read with
//!    `ldmatrix.trans`.
//!
//! The epilogue divides by the row sum, applies V's scale and stores f16.

use crate::arch::{bar, cp_async, cvt, ldmatrix, math, mma, shfl, smem, sreg};
use crate::params::AttnParams;
use crate::schedule;
use crate::softmax::{self, RowMax};
use crate::tiles::{MmaSmemPlan, TileShape};

/// Where one block's tensors live and what it must do.
struct BlockJob {
    q: *const u8,
    k: *const u8,
    v: *const u8,
    o: *mut u16,
    /// First query row of the block.
    row0: u32,
    /// Query rows of the block inside `seq_q`.
    rows: u32,
    /// Keys `0 .. key_end` are visited.
    key_end: u32,
}

impl BlockJob {
    /// Locates the block's rows and heads from the block indices.
    fn new<const HEAD_DIM: usize>(p: &AttnParams, block_m: u32) -> Self {
        let row0 = sreg::block_idx_x() * block_m;
        let head = sreg::block_idx_y() as u64;
        let batch = sreg::block_idx_z() as u64;
        let kv_head = schedule::kv_head(head as u32, p.heads_q, p.heads_kv) as u64;
        let d = HEAD_DIM as u64;
        let q_offset = ((batch * p.heads_q as u64 + head) * p.seq_q as u64 + row0 as u64) * d;
        let kv_offset = (batch * p.heads_kv as u64 + kv_head) * p.seq_kv as u64 * d;
        BlockJob {
            q: (p.q + q_offset) as *const u8,
            k: (p.k + kv_offset) as *const u8,
            v: (p.v + kv_offset) as *const u8,
            o: (p.o + 2 * q_offset) as *mut u16,
            row0,
            rows: block_m.min(p.seq_q - row0),
            key_end: schedule::key_end(row0, block_m, p.seq_q, p.seq_kv, p.causal != 0),
        }
    }
}

/// Issues `cp.async` copies of `rows` E4M3 rows of `HEAD_DIM` bytes from
/// `src` into shared memory at `dst` (rows `fp8_row` bytes apart); rows at or
/// past `valid_rows` are zero-filled without reading global memory.
///
/// # Safety
/// Block-uniform arguments; `src` rows below `valid_rows` readable; the
/// destination inside the block's shared memory.
#[inline(always)]
unsafe fn load_rows<const HEAD_DIM: usize>(
    dst: u32,
    fp8_row: u32,
    src: *const u8,
    rows: u32,
    valid_rows: u32,
    threads: u32,
) {
    let chunks_per_row = HEAD_DIM as u32 / 16;
    let mut c = sreg::thread_idx_x();
    while c < rows * chunks_per_row {
        let r = c / chunks_per_row;
        let col = (c % chunks_per_row) * 16;
        let valid = r < valid_rows;
        let from = if valid { src.wrapping_add((r as usize) * HEAD_DIM + col as usize) } else { src };
        // SAFETY: in-bounds source when valid; 16-byte aligned destination.
        unsafe { cp_async::copy_16_zfill(dst + r * fp8_row + col, from, if valid { 16 } else { 0 }) };
        c += threads;
    }
}

/// Converts the E4M3 V tile at `src` into f16 at `dst` (both shared).
///
/// # Safety
/// Shared-memory pointers laid out as in [`MmaSmemPlan`]; the caller
/// synchronises the block before and after.
#[inline(always)]
unsafe fn convert_v<const HEAD_DIM: usize>(
    src: *const u8,
    dst: *mut u8,
    plan: &MmaSmemPlan,
    block_n: u32,
    threads: u32,
) {
    let chunks_per_row = HEAD_DIM as u32 / 8;
    let mut c = sreg::thread_idx_x();
    while c < block_n * chunks_per_row {
        let r = c / chunks_per_row;
        let col = c % chunks_per_row;
        // SAFETY: 8-byte aligned E4M3 chunk and 16-byte aligned f16 chunk in this block's tiles.
        unsafe {
            let codes = *(src.add((r * plan.fp8_row + col * 8) as usize) as *const [u16; 4]);
            let halves = [
                cvt::e4m3x2_to_f16x2(codes[0]),
                cvt::e4m3x2_to_f16x2(codes[1]),
                cvt::e4m3x2_to_f16x2(codes[2]),
                cvt::e4m3x2_to_f16x2(codes[3]),
            ];
            *(dst.add((r * plan.f16_row + col * 16) as usize) as *mut [u32; 4]) = halves;
        }
        c += threads;
    }
}

/// The kernel body. `QK_STEPS = HEAD_DIM / 32` (k-steps of Q·K^T),
/// `O_TILES = HEAD_DIM / 8` (8-column tiles of O), `S_TILES = BLOCK_N / 8`
/// (8-column tiles of S).
///
/// # Safety
/// `p` must describe valid device buffers (host-validated); the block must
/// have `WARPS * 32` threads and `MmaSmemPlan::new(..).total` bytes of
/// dynamic shared memory.
#[inline(always)]
pub unsafe fn forward<
    const HEAD_DIM: usize,
    const BLOCK_N: usize,
    const STAGES: usize,
    const WARPS: usize,
    const QK_STEPS: usize,
    const O_TILES: usize,
    const S_TILES: usize,
>(
    p: &AttnParams,
) {
    const {
        assert!(QK_STEPS * 32 == HEAD_DIM && O_TILES * 8 == HEAD_DIM && S_TILES * 8 == BLOCK_N);
        assert!(BLOCK_N % 16 == 0 && O_TILES % 2 == 0 && STAGES >= 2);
    };
    let shape = TileShape {
        head_dim: HEAD_DIM as u32,
        block_m: 16 * WARPS as u32,
        block_n: BLOCK_N as u32,
        stages: STAGES as u32,
        warps: WARPS as u32,
    };
    let plan = MmaSmemPlan::new(shape);
    let threads = shape.threads();
    let block_n = BLOCK_N as u32;
    let lane = sreg::lane_id();
    let warp = sreg::warp_id();
    let (group, quad) = (lane / 4, lane % 4);
    // ldmatrix: lane l addresses row l % 8 of matrix l / 8.
    let (ld_matrix, ld_row) = (lane / 8, lane % 8);

    let job = BlockJob::new::<HEAD_DIM>(p, shape.block_m);
    let causal = p.causal != 0;
    let key_blocks = schedule::blocks(job.key_end, block_n);
    if key_blocks == 0 {
        // No row of this block sees a key: the output is zero.
        let mut c = sreg::thread_idx_x();
        while c < job.rows * HEAD_DIM as u32 / 2 {
            // SAFETY: inside the block's output rows.
            unsafe { *(job.o as *mut u32).add(c as usize) = 0 };
            c += threads;
        }
        return;
    }

    // SAFETY: the scale arrays have heads_q / heads_kv entries (host-validated).
    let (q_scale, k_scale, v_scale) = unsafe {
        let head = sreg::block_idx_y() as usize;
        let kv_head = schedule::kv_head(head as u32, p.heads_q, p.heads_kv) as usize;
        (
            *(p.q_scale as *const f32).add(head),
            *(p.k_scale as *const f32).add(kv_head),
            *(p.v_scale as *const f32).add(kv_head),
        )
    };
    let score_scale_log2 = softmax::score_scale_log2(p.softmax_scale, q_scale, k_scale);

    let smem_ptr = smem::dynamic_smem_base();
    // SAFETY: the dynamic shared memory base.
    let smem_base = unsafe { smem::shared_addr(smem_ptr) };
    let load_kv = |j: u32| {
        let stage = j % STAGES as u32;
        let key0 = j * block_n;
        let valid = (p.seq_kv - key0).min(block_n);
        let offset = key0 as usize * HEAD_DIM;
        // SAFETY: block-uniform; key rows below `valid` are inside K and V.
        unsafe {
            load_rows::<HEAD_DIM>(
                smem_base + plan.k_stage(stage, block_n),
                plan.fp8_row,
                job.k.wrapping_add(offset),
                block_n,
                valid,
                threads,
            );
            load_rows::<HEAD_DIM>(
                smem_base + plan.v_stage(stage, block_n),
                plan.fp8_row,
                job.v.wrapping_add(offset),
                block_n,
                valid,
                threads,
            );
        }
    };

    // Prologue: Q and the first STAGES - 1 key blocks, one commit group each.
    // SAFETY: Q rows below `job.rows` are inside Q.
    unsafe { load_rows::<HEAD_DIM>(smem_base + plan.q, plan.fp8_row, job.q, shape.block_m, job.rows, threads) };
    for j in 0..STAGES as u32 - 1 {
        if j < key_blocks {
            load_kv(j);
        }
        // SAFETY: closes this thread's copies.
        unsafe { cp_async::commit_group() };
    }

    let mut q_frag = [[0u32; 4]; QK_STEPS];
    let mut m = [RowMax::EMPTY; 2];
    let mut l = [0f32; 2];
    let mut o = [[0f32; 4]; O_TILES];
    let warp_row0 = job.row0 + 16 * warp;

    for j in 0..key_blocks {
        let stage = j % STAGES as u32;
        // SAFETY: block-uniform loop; after the wait and the barrier, block j
        // (and Q) are in shared memory for every thread.
        unsafe {
            cp_async::wait_group(STAGES as u32 - 2);
            bar::sync_threads();
        }
        if j == 0 {
            for (ks, frag) in q_frag.iter_mut().enumerate() {
                let row = 16 * warp + (ld_matrix % 2) * 8 + ld_row;
                let col = ks as u32 * 32 + (ld_matrix / 2) * 16;
                // SAFETY: converged warp; a 16-byte row inside the Q tile.
                *frag = unsafe { ldmatrix::load_x4(smem_base + plan.q + row * plan.fp8_row + col) };
            }
        }
        // SAFETY: shared tiles of this stage; the barrier below publishes it.
        unsafe {
            convert_v::<HEAD_DIM>(
                smem_ptr.add(plan.v_stage(stage, block_n) as usize),
                smem_ptr.add(plan.v_f16 as usize),
                &plan,
                block_n,
                threads,
            )
        };
        // Refill the buffer that block j - 1 used (everyone is past it).
        if j + STAGES as u32 - 1 < key_blocks {
            load_kv(j + STAGES as u32 - 1);
        }
        // SAFETY: closes this thread's copies (possibly an empty group).
        unsafe { cp_async::commit_group() };

        // S = Q·K^T for this key block.
        let mut s = [[0f32; 4]; S_TILES];
        let k_tile = smem_base + plan.k_stage(stage, block_n);
        for pair in 0..S_TILES / 2 {
            for (ks, a) in q_frag.iter().enumerate() {
                let row = pair as u32 * 16 + (ld_matrix / 2) * 8 + ld_row;
                let col = ks as u32 * 32 + (ld_matrix % 2) * 16;
                // SAFETY: converged warp; rows inside the K tile.
                unsafe {
                    let b = ldmatrix::load_x4(k_tile + row * plan.fp8_row + col);
                    mma::m16n8k32_e4m3(&mut s[2 * pair], *a, [b[0], b[1]]);
                    mma::m16n8k32_e4m3(&mut s[2 * pair + 1], *a, [b[2], b[3]]);
                }
            }
        }

        // Mask keys a row must not see (only in blocks that can hold one).
        let key0 = j * block_n;
        if schedule::block_needs_mask(job.row0, key0, block_n, p.seq_q, p.seq_kv, causal) {
            for (t, tile) in s.iter_mut().enumerate() {
                for (e, x) in tile.iter_mut().enumerate() {
                    let row = warp_row0 + group + 8 * (e as u32 / 2);
                    let key = key0 + t as u32 * 8 + 2 * quad + e as u32 % 2;
                    if !schedule::key_visible(row, key, p.seq_q, p.seq_kv, causal) {
                        *x = f32::NEG_INFINITY;
                    }
                }
            }
        }

        // Online softmax: rows `group` (h = 0) and `group + 8` (h = 1).
        let mut alpha = [0f32; 2];
        let mut base = [0f32; 2];
        for h in 0..2 {
            let mut tile_max = f32::NEG_INFINITY;
            for tile in &s {
                tile_max = tile_max.max(tile[2 * h]).max(tile[2 * h + 1]);
            }
            // SAFETY: converged warp; the four lanes of a quad share the row.
            unsafe {
                tile_max = tile_max.max(shfl::shfl_xor_f32(tile_max, 1));
                tile_max = tile_max.max(shfl::shfl_xor_f32(tile_max, 2));
            }
            (alpha[h], base[h]) = m[h].update(tile_max * score_scale_log2, math::exp2);
        }
        let mut row_sum = [0f32; 2];
        for tile in s.iter_mut() {
            for (e, x) in tile.iter_mut().enumerate() {
                *x = math::exp2(*x * score_scale_log2 - base[e / 2]);
                row_sum[e / 2] += *x;
            }
        }
        for h in 0..2 {
            l[h] = l[h] * alpha[h] + row_sum[h];
        }
        for tile in o.iter_mut() {
            for (e, x) in tile.iter_mut().enumerate() {
                *x *= alpha[e / 2];
            }
        }

        // SAFETY: block-uniform; publishes the f16 V tile.
        unsafe { bar::sync_threads() };

        // O += P·V: P's accumulators become the A operand directly.
        let v_tile = smem_base + plan.v_f16;
        for kk in 0..S_TILES / 2 {
            let (lo, hi) = (&s[2 * kk], &s[2 * kk + 1]);
            let a = [
                cvt::pack_f16x2(lo[0], lo[1]),
                cvt::pack_f16x2(lo[2], lo[3]),
                cvt::pack_f16x2(hi[0], hi[1]),
                cvt::pack_f16x2(hi[2], hi[3]),
            ];
            for pair in 0..O_TILES / 2 {
                let key = kk as u32 * 16 + (ld_matrix % 2) * 8 + ld_row;
                let col = (2 * pair as u32 + ld_matrix / 2) * 16;
                // SAFETY: converged warp; rows inside the f16 V tile.
                unsafe {
                    let b = ldmatrix::load_x4_trans(v_tile + key * plan.f16_row + col);
                    mma::m16n8k16_f16(&mut o[2 * pair], a, [b[0], b[1]]);
                    mma::m16n8k16_f16(&mut o[2 * pair + 1], a, [b[2], b[3]]);
                }
            }
        }
    }
    // SAFETY: drain the (empty) trailing groups before the block exits.
    unsafe { cp_async::wait_group(0) };

    // Epilogue: full row sums, 1/l and V's scale, f16 stores.
    for h in 0..2 {
        // SAFETY: converged warp.
        unsafe {
            l[h] += shfl::shfl_xor_f32(l[h], 1);
            l[h] += shfl::shfl_xor_f32(l[h], 2);
        }
    }
    let out_scale = l.map(|x| softmax::output_scale(x, v_scale));
    for h in 0..2u32 {
        let local_row = 16 * warp + group + 8 * h;
        if local_row >= job.rows {
            continue;
        }
        for (t, tile) in o.iter().enumerate() {
            let col = t * 8 + 2 * quad as usize;
            let packed = cvt::pack_f16x2(
                tile[2 * h as usize] * out_scale[h as usize],
                tile[2 * h as usize + 1] * out_scale[h as usize],
            );
            // SAFETY: row < rows and col + 1 < HEAD_DIM: inside the output; 4-byte aligned.
            unsafe { *(job.o.add(local_row as usize * HEAD_DIM + col) as *mut u32) = packed };
        }
    }
}
