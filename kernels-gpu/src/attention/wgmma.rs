//! `wgmma`: flash-style attention on Hopper's warpgroup tensor-core
//! instructions (sm_90a only).
//!
//! A block owns `BLOCK_M = 64 * WARPGROUPS` query rows; warpgroup `g` owns
//! rows `64g .. 64g + 63` and issues the products for them; the warpgroups
//! share the K and `Vt` tiles. A prepass ([`super::prepass`]) has cut `Vt`
//! (V transposed to f16) into 64-key tiles already in the no-swizzle
//! core-matrix layout `wgmma` reads through descriptors; K's tiles come
//! straight from the input by tensor copies (the problem's K map, 64- or
//! 128-byte swizzle). Thread 0 brings each stage's two tiles in
//! with two copies, `STAGES` (4) deep, which complete on the stage's
//! "full" `mbarrier`; each warp arrives on the
//! stage's "empty" one when its products are done with it, and thread 0
//! waits for that before refilling the stage. No other thread copies, and
//! no block barrier or proxy fence stands in the key loop.
//!
//! The key loop is software-pipelined so the tensor cores work while the
//! warps do the softmax: in step `j` a warpgroup issues `S = Q·K^T` of block
//! `j + 1` (`wgmma.m64n64k32.e4m3`) and then `O += P·V` of block `j`
//! (`wgmma.m64nDk16.f16`, P from registers), waits only for the first, and
//! runs the online softmax of block `j + 1` ([`super::online`]) while `P·V`
//! is still in flight; the output is rescaled once that completes.
//!
//! How P·V is multiplied is the kernel's [`PvForm`]. With [`PvF16`] the
//! rows' sums of P come from the tensor cores too: each `Vt` stage is
//! followed by 8 rows of f16 ones ([`crate::tiles::ONES_ROWS`], written
//! once in the prologue), so `P·V` is an `m64n(D + 8)k16` product whose
//! last 8 columns (`sums`) each accumulate the row sums of the f16 P that
//! `P·V` multiplies, rescaled with O; the softmax adds none itself (32 dependent
//! FADDs a step fewer, measured faster: see lab/).
//!
//! The softmax keeps lazy row maxima (`softmax::LAZY_MAX_SLACK`) and, for
//! a block that moves none of them (almost every block after a row's
//! first), only compares its scores with the rows' thresholds and votes
//! (`online::Rows::softmax_lazy`): no block maxima, shuffles or rescale
//! (measured faster: see lab/).
//!
//! [`PvE4M3`] (the opt-in `wgmma-fp8pv` variant) runs P·V on the FP8
//! tensor cores: the prepass leaves `Vt` as V's own E4M3 bytes in
//! [`crate::layout::fp8_pv_key`]'s key order, P is rounded to E4M3 (values
//! up to 2^8 with the lazy maxima's slack, E4M3's largest is 448) straight
//! from the lane's own accumulator elements, and each 64-key block takes
//! two `wgmma.m64nDk32.e4m3` instead of four f16 `k16` ones. The row sums
//! do not come from the tensor cores there: the FP8 `wgmma` accumulates
//! with less than f32's precision, which sums of every positive P of a row
//! turned into an error growing with the keys (rel_l2 0.32 at 16384 keys,
//! see lab/); the softmax adds them in f32 instead.
//!
//! With E4M3 P·V at D = 128 a key block may also be 192 keys, three
//! prepass tiles a stage (`BLOCK_N`; `kernels::WGMMA_FP8PV_LONG_D128`, two
//! warpgroups): Q·Kᵀ as `wgmma.m64n192k32.e4m3`, six P·V products, the
//! step's fixed costs a third as often per key (about even with the
//! 64-key kernel where the host runs it, see lab/). So that every block
//! but the first is whole, a head's first block takes only the tiles left
//! over (`lead` empty slots before them, their scores `-inf` by tile
//! ([`Rows::softmax_past_lead`], no key test per score), `Vt` zeroed once
//! in the prologue); no block reads past the head's last tile.
//!
//! Every D = 128 kernel runs this key loop warp-specialized
//! ([`specialized`]): a producer warpgroup issues every copy, and the
//! warpgroups of rows keep none. The one-role body here (thread 0 copies
//! between its own work) serves D = 64, whose key blocks are single tiles;
//! both take their copies, key walk and descriptors from `feed`.

use super::block::{BlockJob, Rolled, load_rows_strided};
use super::online::{self, Exponent, MaskGeometry, Rows};
use super::output::OutputFormat;
use super::pipeline::Ring;
use crate::arch::{bar, cp_async, fence, grid_dep, math, mbarrier, smem, sreg, tma, wgmma};
use crate::layout::RowLayout;
use crate::params::{AttnParams, KvTiles, TILE_KEYS, TileMaps};
use crate::schedule;
use crate::softmax::{self, LAZY_MAX_SLACK};
use crate::tiles::{TileShape, WgmmaSmemPlan};

mod acc;
mod feed;
mod pv;
mod scores;
pub mod specialized;
mod step;

use feed::{KeyWalk, kv_descriptors, load_kv};
pub use pv::{PvE4M3, PvF16, PvForm};
pub use scores::{CausalKeys, ScoreCap, ScorePolicy, TanhCap, Uncapped, WindowKeys};
use step::{issue_first_scores, issue_scores_and_pv, pv_landed, release, rescale, scores_landed};

/// The kernel body. `QK_STEPS = HEAD_DIM / 32`, `O_TILES = HEAD_DIM / 8`,
/// `PV_STEPS` P·V products per key block (`BLOCK_N / Pv::KEYS_PER_PRODUCT`);
/// `Pv`: how P·V is multiplied (see the module doc);
/// `SOFTMAX_CHAINS`: how each row's block maximum and sum are folded (1 or
/// 4 chains, `online::fold_row`);
/// `E`: how the softmax computes its exponent ([`online::FusedFma`], one
/// FFMA, which the entry picks when the block's score factor allows it, or
/// [`online::Unfused`]); `job`: the block's rows and heads
/// ([`BlockJob::new`] at this tile's `block_m`, its keys limited by `Sc`);
/// `Sc`: which keys the block visits and how its scores are shaped
/// ([`ScorePolicy`]: [`CausalKeys`], or a window's [`WindowKeys`], whose
/// key blocks start at the 64-key tile of `job.key_begin`).
///
/// # Safety
/// `p` must describe valid device buffers (host-validated); the block must
/// have `128 * WARPGROUPS` threads and `WgmmaSmemPlan::new(..).total` bytes
/// of dynamic shared memory.
#[inline(always)]
pub unsafe fn forward<
    const HEAD_DIM: usize,
    const WARPGROUPS: usize,
    const BLOCK_N: usize,
    const S_TILES: usize,
    const STAGES: usize,
    const QK_STEPS: usize,
    const O_TILES: usize,
    const SOFTMAX_CHAINS: usize,
    E: Exponent,
    const PV_STEPS: usize,
    Pv: PvForm,
    Sc: ScorePolicy,
    Out: OutputFormat,
>(
    p: &AttnParams,
    job: BlockJob,
) {
    const {
        assert!(QK_STEPS * 32 == HEAD_DIM && O_TILES * 8 == HEAD_DIM);
        assert!((HEAD_DIM == 64 || HEAD_DIM == 128) && STAGES >= 3);
        // A key block is one tile of the prepass's scratch (the 192-key
        // blocks run in the specialized body).
        assert!(S_TILES * 8 == BLOCK_N && BLOCK_N == TILE_KEYS as usize);
    };
    let shape = TileShape {
        head_dim: HEAD_DIM as u32,
        block_m: 64 * WARPGROUPS as u32,
        block_n: BLOCK_N as u32,
        stages: STAGES as u32,
        warps: 4 * WARPGROUPS as u32,
        splits: 1,
    };
    let plan = WgmmaSmemPlan::new(shape, Pv::e4m3());
    let tile_rows = RowLayout::CoreMatrices { row_bytes: HEAD_DIM as u32 };
    let threads = shape.threads();
    // Every thread of the block copies Q: (this thread, all of them).
    let team = (sreg::thread_idx_x(), threads);
    let block_n = BLOCK_N as u32;
    let lane = sreg::lane_id();
    let warp = sreg::warp_id();
    let (group, quad) = (lane / 4, lane % 4);
    let warpgroup = warp / 4;
    let warp_row = 64 * warpgroup + 16 * (warp % 4);

    let causal = p.causal != 0;
    // This head's `Vt` tiles as the prepass wrote them, and the block's
    // walk over them (from the first key tile, 0 but under a window). (The
    // score policy's branches below are on constants: `CausalKeys` builds
    // the kernels as they were before windows.)
    let kv = KvTiles::of(p, HEAD_DIM as u32, Pv::e4m3());
    let walk = KeyWalk::of::<BLOCK_N>(p, &job, kv, Sc::WINDOWED);
    let key_blocks = walk.key_blocks;
    if key_blocks == 0 {
        // SAFETY: the block's own output rows and log-sum-exp entries.
        unsafe { job.no_keys::<HEAD_DIM>(p, threads) };
        return;
    }

    let smem_ptr = smem::dynamic_smem_base();
    // SAFETY: the dynamic shared memory base.
    let smem_base = unsafe { smem::shared_addr(smem_ptr) };
    let full = |stage: u32| smem_base + plan.full_barrier(stage);
    let empty = |stage: u32| smem_base + plan.empty_barrier(stage, shape);
    let stages = STAGES as u32;
    // Key block `j`'s stage and the parity of that stage's barrier phases.
    let ring = Ring::<STAGES>::at;
    let k_map = p.tile_maps + TileMaps::K_OFFSET;
    // Key block `j` into its stage, completing on its "full" barrier
    // (thread 0 only).
    let load = |j: u32| {
        // SAFETY: the stage of key block `j` is free (its "empty" phase
        // completed, or never used); the tiles lie inside the scratch.
        unsafe { load_kv::<HEAD_DIM, BLOCK_N, STAGES>(p, (smem_base, plan, shape), kv, &job, walk, (j, j)) }
    };

    let producer = sreg::thread_idx_x() == 0;
    if producer {
        // SAFETY: `k_map` is the problem's K map (the host encodes the maps
        // for `wgmma`); no thread uses the barriers before the block barrier
        // below; the fence makes their initialization visible to the copy
        // engine (async proxy).
        unsafe {
            tma::prefetch_map(k_map);
            for stage in 0..stages {
                mbarrier::init(full(stage), 1);
                mbarrier::init(empty(stage), shape.warps);
            }
            fence::proxy_async_shared();
        }
        for j in 0..key_blocks.min(stages) {
            load(j);
        }
    }
    // SAFETY: Q rows below `job.rows` are inside Q.
    unsafe {
        let q = (job.q, job.q_row_stride);
        load_rows_strided::<HEAD_DIM, Rolled>(smem_base + plan.q, tile_rows, q, shape.block_m, job.rows, team);
        cp_async::commit_group();
    }

    // Every stage's rows of ones (f16 1.0 pairs; none where `Pv::SUM_ROWS` is 0),
    // once: one word per thread and stage (a stage's ones are 256 words,
    // fewer than the threads); the prologue's proxy fence and block barrier
    // below publish them to `wgmma`.
    const { assert!(Pv::SUM_ROWS * BLOCK_N as u32 * 2 / 4 <= 128 * WARPGROUPS as u32) };
    if Pv::SUM_ROWS > 0 && team.0 < Pv::SUM_ROWS * block_n * 2 / 4 {
        for stage in 0..stages {
            let at = plan.ones_rows(stage, shape) + 4 * team.0;
            // SAFETY: inside a stage's rows of ones, 4-byte aligned.
            unsafe { *(smem_ptr.add(at as usize) as *mut u32) = 0x3C00_3C00 };
        }
    }

    let mut rows = Rows::EMPTY;
    let mut o = [[0f32; 4]; O_TILES];
    // Every element of `sums[0]` (a 16x8 tile of `P·V`'s accumulator) is a
    // row sum: `sums[0][0]` row `group`, `sums[0][2]` row `group + 8`.
    let mut sums = [[0f32; 4]; 1];
    let mut s = [[0f32; 4]; S_TILES];
    // Per row, the score past which the lazy maximum would move
    // (`Rows::softmax_lazy`): none has been seen yet.
    let mut over_at = [f32::NEG_INFINITY; 2];
    let geometry =
        MaskGeometry { row: job.row0 + warp_row + group, col: 2 * quad, seq_q: job.seq_q, seq_kv: job.seq_kv, causal };
    // Descriptors of S = Q·K^T and of P·V for key block `j`: the first
    // stage's, made once, advanced to the block's stage by one add each
    // (building them in the loop took ~30 uniform-datapath instructions per
    // warp and step); computed and pinned before `wgmma.fence` so that no
    // register a `wgmma` reads is defined after it.
    let (qk_descs, pv_descs) =
        kv_descriptors::<HEAD_DIM, BLOCK_N, STAGES, QK_STEPS, PV_STEPS>((smem_base, plan, shape), kv, warpgroup);
    // The mask of key block `j`, if it needs one.
    let masked_from = schedule::first_masked_block(job.row0, block_n, job.seq_q, job.seq_kv, causal);
    let mask_of = |j: u32| (j >= masked_from).then_some((geometry, j * block_n));
    // Shapes and masks key block `j`'s scores by a windowed score policy
    // (the causal mask is left to the softmax: `mask_of`).
    let shape_window = |s: &mut [[f32; 4]; S_TILES], j: u32| {
        Sc::shape(p, &job, s, (geometry, shape.block_m), (walk.first_tile + j) * block_n);
    };
    let score_factor = if Sc::WINDOWED { Sc::softmax_factor(p, &job) } else { job.score_scale_log2 };
    // Waits until key block `j`'s tiles have landed (in the async proxy,
    // where `wgmma` reads them).
    let tiles_landed = |j: u32| {
        // SAFETY: the barrier was initialized before the block barrier of
        // the prologue; its phase for block j completes once the copies land.
        unsafe { mbarrier::wait(full(ring(j).stage), ring(j).parity) };
    };
    // Waits until every warp has released key block `j`'s stage.
    let stage_released = |j: u32| {
        // SAFETY: the barrier was initialized before the block barrier of
        // the prologue; every warp arrives on its phase for block j after
        // its last product reading the block.
        unsafe { mbarrier::wait(empty(ring(j).stage), ring(j).parity) };
    };
    // Prologue: Q landed and visible to every warpgroup and the async proxy
    // (and the barriers initialized), then S and P of block 0.
    // SAFETY: block-uniform.
    unsafe {
        cp_async::wait_group(0);
        fence::proxy_async_shared();
        bar::sync_threads();
    }
    tiles_landed(0);
    // SAFETY: warpgroup-uniform; Q and K of block 0 are written and fenced.
    unsafe { issue_first_scores(&mut s, qk_descs(0)) };
    // SAFETY: warpgroup-uniform; converged warps.
    let mut p_frag: [[u32; 4]; PV_STEPS] = unsafe {
        wgmma::wait_group(0);
        let mask = if Sc::WINDOWED {
            shape_window(&mut s, 0);
            None
        } else {
            mask_of(0)
        };
        rows.softmax_lazy::<E, SOFTMAX_CHAINS, _>(&mut s, score_factor, LAZY_MAX_SLACK, &mut over_at, mask);
        Pv::fragments::<S_TILES, PV_STEPS>(&s)
    };
    Pv::add_row_sums(&mut rows, &s, None);

    for j in 0..key_blocks {
        let next = j + 1 < key_blocks;
        if next {
            // K of block j + 1 (Vt of block j landed with K of block j).
            tiles_landed(j + 1);
        }
        // Scores of block j + 1 and P·V of block j. (The last step re-issues
        // block j's scores and ignores them: no branch may stand between
        // `wgmma.fence` and a `wgmma`.)
        let next_qk = qk_descs(if next { j + 1 } else { j });
        // SAFETY: warpgroup-uniform; K of block j + 1 and Vt of block j are
        // written and fenced; O_TILES is 8 or 16 (HEAD_DIM 64 or 128).
        unsafe { issue_scores_and_pv::<Pv, _, _, _, _>(&mut s, next_qk, &mut o, &mut sums, &mut p_frag, pv_descs(j)) };
        // Meanwhile thread 0 refills block j - 1's stage with block j + STAGES - 1.
        if producer && j >= 1 && j + stages - 1 < key_blocks {
            stage_released(j - 1);
            load(j + stages - 1);
        }
        // SAFETY: every lane of every warp reaches it.
        unsafe { bar::sync_warp() };
        if next {
            // The softmax of block j + 1 while P·V of block j runs, then the rescale.
            // SAFETY: warpgroup-uniform; converged warps.
            let moved = unsafe {
                scores_landed(&p_frag);
                let mask = if Sc::WINDOWED {
                    shape_window(&mut s, j + 1);
                    None
                } else {
                    mask_of(j + 1)
                };
                let slack = LAZY_MAX_SLACK;
                rows.softmax_lazy::<E, SOFTMAX_CHAINS, _>(&mut s, score_factor, slack, &mut over_at, mask)
            };
            // SAFETY: warpgroup-uniform.
            unsafe { pv_landed(&p_frag) };
            rescale::<Pv, O_TILES>(&mut o, &mut sums, moved);
            Pv::add_row_sums(&mut rows, &s, moved);
            // P of block j + 1 only now (see `pv_landed`).
            p_frag = Pv::fragments::<S_TILES, PV_STEPS>(&s);
        } else {
            // SAFETY: warpgroup-uniform.
            unsafe { wgmma::wait_group(0) };
        }
        // SAFETY: after the step's last wait.
        unsafe { release(lane, empty(ring(j).stage)) };
    }
    // The next kernel may launch now (after the key loop; see `grid_dep`).
    grid_dep::launch_dependents();

    // SAFETY: converged warp; the block's own output rows and log-sum-exp
    // entries.
    unsafe {
        let row_sums = Pv::row_sums(&rows, &sums);
        let local_row = warp_row + group;
        if let Some(lse) = job.lse_entries::<HEAD_DIM>(p) {
            online::store_lse(lse, &rows.m, row_sums, local_row, job.rows, quad);
        }
        let scales = row_sums.map(|l| softmax::output_scale(l, job.v_scale, math::rcp));
        online::store_rows::<HEAD_DIM, O_TILES, Out>(job.o, &o, scales, (local_row, job.o_row_stride), job.rows, quad);
    }
}
