//! `mma`: flash-style tiled attention on `mma.sync` (sm_89 and sm_90).
//!
//! A block owns `BLOCK_M = 16 * WARPS` query rows of one (batch, head); warp
//! `w` owns rows `16w .. 16w + 15`. The key loop walks `BLOCK_N`-key blocks:
//!
//! 1. K and V (E4M3) arrive in shared memory by `cp.async`, `STAGES` buffers
//!    deep, so block `j + STAGES - 1` loads while block `j` computes;
//! 2. `S = Q·K^T` on `mma.m16n8k32.e4m3` (Q fragments stay in registers);
//! 3. online softmax straight on the accumulators ([`super::online`]);
//! 4. `O += P·V` on `mma.m16n8k16.f16`: the accumulator layout of S *is* the
//!    A-operand layout, so P never leaves registers; V is converted once per
//!    block from E4M3 to f16 in shared memory (exact) and read with
//!    `ldmatrix.trans`.
//!
//! The epilogue divides by the row sum, applies V's scale and stores f16.
//!
//! Which keys a block walks and how its scores are masked and shaped is its
//! walk's ([`Walk`]: prefill's [`super::walk::FullRows`], or under a key
//! window [`super::walk::WindowRows`]); only the walk's rows, key range and
//! scores are used here, the body's stores stay its own.

use super::block::{CopyLoop, load_rows};
use super::online::{self, MaskGeometry, Rows};
use super::output::OutputFormat;
use super::pipeline::{self, Ring};
use super::walk::Walk;
use super::warp_tile;
use crate::arch::{bar, cp_async, cvt, grid_dep, ldmatrix, math, mma, smem, sreg};
use crate::layout::RowLayout;
use crate::params::AttnParams;
use crate::schedule;
use crate::softmax;
use crate::tiles::{MmaSmemPlan, TileShape};

/// Eight E4M3 codes of a V row, read as one 8-byte access (as `[u16; 4]`
/// LLVM knows only 2-byte alignment and reads it as four 2-byte loads).
#[derive(Clone, Copy)]
#[repr(C, align(8))]
struct CodeChunk([u16; 4]);

/// The eight f16 values of a [`CodeChunk`], written as one 16-byte access.
#[repr(C, align(16))]
struct HalfChunk([u32; 4]);

/// Converts the E4M3 V tile at `src` into f16 at `dst` (both shared,
/// padded rows as in [`MmaSmemPlan`]).
///
/// # Safety
/// The caller synchronises the block before and after.
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
            let codes = *(src.add((r * plan.fp8_row + col * 8) as usize) as *const CodeChunk);
            *(dst.add((r * plan.f16_row + col * 16) as usize) as *mut HalfChunk) =
                HalfChunk(codes.0.map(cvt::e4m3x2_to_f16x2));
        }
        c += threads;
    }
}

/// `o += P·V` for one key block: `p` the probabilities (`S_TILES` 8-key
/// accumulator tiles), which are the A operand as they lie; V the block's
/// f16 tile at `v_tile` (rows `f16_row` bytes apart), read with
/// `ldmatrix.trans` (lane `l` addresses row `l % 8` of matrix `l / 8`:
/// `lane` is `(l / 8, l % 8)`).
///
/// # Safety
/// Converged warp; `8 * S_TILES` rows of `16 * O_TILES` readable bytes at
/// `v_tile`.
#[inline(always)]
unsafe fn pv_f16<const S_TILES: usize, const O_TILES: usize>(
    o: &mut [[f32; 4]; O_TILES],
    p: &[[f32; 4]; S_TILES],
    v_tile: u32,
    f16_row: u32,
    (ld_matrix, ld_row): (u32, u32),
) {
    for kk in 0..S_TILES / 2 {
        let a = online::p_fragment(p, kk);
        for pair in 0..O_TILES / 2 {
            let key = kk as u32 * 16 + (ld_matrix % 2) * 8 + ld_row;
            let col = (2 * pair as u32 + ld_matrix / 2) * 16;
            // SAFETY: converged warp; rows inside the f16 V tile.
            unsafe {
                let b = ldmatrix::load_x4_trans(v_tile + key * f16_row + col);
                mma::m16n8k16_f16(&mut o[2 * pair], a, [b[0], b[1]]);
                mma::m16n8k16_f16(&mut o[2 * pair + 1], a, [b[2], b[3]]);
            }
        }
    }
}

/// The exponent this kernel uses: always unfused (`softmax::exponent`);
/// the fused one measured no gain here and cost registers (see lab/).
type Unfused = online::Unfused;

/// The kernel body. `QK_STEPS = HEAD_DIM / 32` (k-steps of Q·K^T),
/// `O_TILES = HEAD_DIM / 8` (8-column tiles of O), `S_TILES = BLOCK_N / 8`
/// (8-column tiles of S); `Copy`: how each thread issues its tile copies
/// ([`CopyLoop`]); `W`: the block's rows, keys and score shaping
/// ([`Walk::job`], [`Walk::thread_rows`], [`Walk::prepare_scores`],
/// [`Walk::needs_mask`]).
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
    Copy: CopyLoop,
    W: Walk,
    Out: OutputFormat,
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
        splits: 1,
    };
    let plan = MmaSmemPlan::new(shape);
    let fp8_rows = RowLayout::Padded { stride: plan.fp8_row };
    let threads = shape.threads();
    // Every thread of the block copies: (this thread, all of them).
    let team = (sreg::thread_idx_x(), threads);
    let block_n = BLOCK_N as u32;
    let lane = sreg::lane_id();
    let warp = sreg::warp_id();
    let (group, quad) = (lane / 4, lane % 4);
    // ldmatrix: lane l addresses row l % 8 of matrix l / 8.
    let (ld_matrix, ld_row) = (lane / 8, lane % 8);

    // SAFETY: host-validated parameters.
    let job = unsafe { W::job::<HEAD_DIM>(p, (shape.block_m, block_n)) };
    let causal = p.causal != 0;
    let key_blocks = schedule::blocks(job.key_end - job.key_begin, block_n);
    if key_blocks == 0 {
        // SAFETY: the block's own output rows and log-sum-exp entries.
        unsafe { job.no_keys::<HEAD_DIM>(p, threads) };
        return;
    }

    let smem_ptr = smem::dynamic_smem_base();
    // SAFETY: the dynamic shared memory base.
    let smem_base = unsafe { smem::shared_addr(smem_ptr) };
    let load_kv = |j: u32| {
        let stage = Ring::<STAGES>::at(j).stage;
        let key0 = job.key_begin + j * block_n;
        let valid = (p.seq_kv - key0).min(block_n);
        let offset = key0 as usize * HEAD_DIM;
        // SAFETY: block-uniform; key rows below `valid` are inside K and V.
        unsafe {
            let k_dst = smem_base + plan.k_stage(stage, block_n);
            load_rows::<HEAD_DIM, Copy>(k_dst, fp8_rows, job.k.wrapping_add(offset), block_n, valid, team);
            let v_dst = smem_base + plan.v_stage(stage, block_n);
            load_rows::<HEAD_DIM, Copy>(v_dst, fp8_rows, job.v.wrapping_add(offset), block_n, valid, team);
        }
    };

    // Prologue: Q and the first STAGES - 1 key blocks, one commit group each.
    // SAFETY: Q rows below `job.rows` are inside Q.
    unsafe { load_rows::<HEAD_DIM, Copy>(smem_base + plan.q, fp8_rows, job.q, shape.block_m, job.rows, team) };
    for j in 0..STAGES as u32 - 1 {
        if j < key_blocks {
            load_kv(j);
        }
        // SAFETY: closes this thread's copies.
        unsafe { cp_async::commit_group() };
    }

    let mut q_frag: warp_tile::QFragments<QK_STEPS> = core::array::from_fn(|_| Default::default());
    let mut rows = Rows::EMPTY;
    let mut o = [[0f32; 4]; O_TILES];
    let geometry =
        MaskGeometry { row: job.row0 + 16 * warp + group, col: 2 * quad, seq_q: p.seq_q, seq_kv: p.seq_kv, causal };
    // SAFETY: the job `W::job` located.
    let thread_rows = unsafe { W::thread_rows(p, &job, [16 * warp + group, 16 * warp + group + 8], 2 * quad) };

    for j in 0..key_blocks {
        let stage = Ring::<STAGES>::at(j).stage;
        // Wait for block j (and Q). SAFETY: block-uniform loop.
        unsafe { pipeline::wait_copies::<STAGES>() };
        if j == 0 {
            // SAFETY: converged warp; the warp's 16 rows of the Q tile.
            q_frag = unsafe { warp_tile::q_fragments(smem_base + plan.q, fp8_rows, 16 * warp) };
        }
        // V to f16. SAFETY: shared tiles of this stage; the barrier below publishes it.
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
        // S = Q·K^T. SAFETY: converged warp; the K tile of this stage.
        let k_tile = smem_base + plan.k_stage(stage, block_n);
        let [mut s] =
            unsafe { warp_tile::scores::<QK_STEPS, S_TILES, 1>(core::array::from_ref(&q_frag), k_tile, fp8_rows) };
        // Shape and mask (the walk's), softmax, rescale O. SAFETY: converged warp.
        let key0 = job.key_begin + j * block_n;
        W::prepare_scores(&mut s, &thread_rows, key0);
        let masked = W::needs_mask(p, &job, key0, block_n);
        unsafe { rows.step::<Unfused, _, _>(&mut s, &mut o, job.score_scale_log2, masked.then_some((geometry, key0))) };
        // O += P·V. SAFETY: block-uniform; the barrier publishes the f16 V tile.
        unsafe {
            bar::sync_threads();
            pv_f16(&mut o, &s, smem_base + plan.v_f16, plan.f16_row, (ld_matrix, ld_row));
        }
    }
    // SAFETY: drain the (empty) trailing groups before the block exits.
    unsafe { cp_async::wait_group(0) };
    // The next kernel may launch now (after the key loop; see `grid_dep`).
    grid_dep::launch_dependents();

    // SAFETY: converged warp; the block's own output rows and log-sum-exp
    // entries.
    unsafe {
        let (local_row, sums) = (16 * warp + group, rows.row_sums());
        if let Some(lse) = job.lse_entries::<HEAD_DIM>(p) {
            online::store_lse(lse, &rows.m, sums, local_row, job.rows, quad);
        }
        let scales = sums.map(|l| softmax::output_scale(l, job.v_scale, math::rcp));
        online::store_rows::<HEAD_DIM, O_TILES, Out>(job.o, &o, scales, (local_row, HEAD_DIM as u32), job.rows, quad);
    }
}
