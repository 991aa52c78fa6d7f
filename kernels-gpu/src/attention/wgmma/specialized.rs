//! The warp-specialized form of the `wgmma` body: the kernels whose
//! `kernels::Roles` is `ProducerWarpgroup` (at D = 128 `wgmma`'s and
//! `wgmma-fp8pv`'s with all their twins, and `wgmma-fp8pv`'s 192-key
//! kernel).
//!
//! Roles by warpgroup:
//! - **Consumers**, warpgroups `0 .. WARPGROUPS`: each owns 64 query rows
//!   of the block and runs [`super::forward`]'s key loop on them (scores,
//!   softmax, P·V) with no copy of its own but Q's, and no branch for one:
//!   their register limit raised to [`consumer_registers`] (`setmaxnreg`).
//! - **The producer**, warpgroup `WARPGROUPS`: its limit lowered to
//!   [`PRODUCER_REGISTERS`], one of its threads issues every K/Vt copy,
//!   `STAGES` key blocks ahead, refilling a stage once every consumer warp
//!   has released it.
//!
//! Against the one-role body, where thread 0 refills a stage between its
//! warp's products and softmax, no consumer warp waits on a release and
//! the key loop runs fewer instructions (see lab/).

use super::feed::{KeyWalk, kv_descriptors, load_kv};
use super::step::{issue_first_scores, issue_scores_and_pv, pv_landed, release, rescale, scores_landed};
use super::{PvForm, ScorePolicy};
use crate::arch::{bar, cp_async, fence, grid_dep, math, mbarrier, smem, sreg, wgmma};
use crate::attention::block::{BlockJob, Rolled, load_rows_strided};
use crate::attention::online::{self, Exponent, MaskGeometry, Rows};
use crate::attention::output::OutputFormat;
use crate::attention::pipeline::Ring;
use crate::layout::RowLayout;
use crate::params::{AttnParams, KvTiles, TILE_KEYS};
use crate::schedule;
use crate::softmax::{self, LAZY_MAX_SLACK};
use crate::tiles::{TileShape, WgmmaSmemPlan};

/// The producer warpgroup's register limit: its one issuing thread's walk
/// over the key blocks.
pub const PRODUCER_REGISTERS: u32 = 24;

/// Registers a thread of a block of `threads` threads holds at launch: the
/// register file's 65536 shared out, in multiples of 8.
const fn launch_registers(threads: u32) -> u32 {
    65536 / threads / 8 * 8
}

/// The consumer warpgroups' register limit with `warpgroups` of them and
/// the producer: what the producer gives back from the launch's share, in
/// multiples of 8 (240 for two, 160 for three).
pub const fn consumer_registers(warpgroups: u32) -> u32 {
    (65536 - 128 * PRODUCER_REGISTERS) / (128 * warpgroups) / 8 * 8
}

/// The kernel body (see the module doc): [`super::forward`]'s parameters
/// (`job` its block's, dense or packed, its keys limited by `Sc`); its
/// `WARPGROUPS` warpgroups of rows are the consumers, and one more the
/// producer.
///
/// # Safety
/// `p` must describe valid device buffers (host-validated); the block must
/// have `128 * (WARPGROUPS + 1)` threads under launch bounds that fix its
/// registers at `65536 / threads` a thread (168 or 128), and
/// `WgmmaSmemPlan::new(..).total` bytes of dynamic shared memory.
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
        assert!(QK_STEPS * 32 == HEAD_DIM && O_TILES * 8 == HEAD_DIM && S_TILES * 8 == BLOCK_N);
        assert!((HEAD_DIM == 64 || HEAD_DIM == 128) && STAGES >= 3);
        // A key block is one prepass tile, or three (E4M3 P·V at D = 128,
        // no rows of ones).
        assert!(
            BLOCK_N == TILE_KEYS as usize
                || (Pv::SUM_ROWS == 0 && BLOCK_N == 3 * TILE_KEYS as usize && HEAD_DIM == 128)
        );
        // A window's key blocks are whole tiles from its first one.
        assert!(!Sc::WINDOWED || BLOCK_N == TILE_KEYS as usize);
        // Two or three warpgroups of rows (the register raise below names
        // each count's limit), and the producer gives back what they take.
        assert!(WARPGROUPS == 2 || WARPGROUPS == 3);
        let (w, launch) = (WARPGROUPS as u32, launch_registers(128 * (WARPGROUPS as u32 + 1)));
        assert!(w * (consumer_registers(w) - launch) <= launch - PRODUCER_REGISTERS);
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
    let kv = KvTiles::of(p, HEAD_DIM as u32, Pv::e4m3());
    let walk = KeyWalk::of::<BLOCK_N>(p, &job, kv, Sc::WINDOWED);
    let key_blocks = walk.key_blocks;
    // The consumers' threads: (this thread, all of them).
    let consumers = 128 * WARPGROUPS as u32;
    let team = (sreg::thread_idx_x(), consumers);
    if key_blocks == 0 {
        if team.0 < consumers {
            // SAFETY: the block's own output rows and log-sum-exp entries.
            unsafe { job.no_keys::<HEAD_DIM>(p, consumers) };
        }
        return;
    }
    let lane = sreg::lane_id();
    let warp = sreg::warp_id();
    let (group, quad) = (lane / 4, lane % 4);
    let warpgroup = warp / 4;
    let warp_row = 64 * warpgroup + 16 * (warp % 4);
    let causal = p.causal != 0;
    let block_n = BLOCK_N as u32;
    let stages = STAGES as u32;

    let smem_ptr = smem::dynamic_smem_base();
    // SAFETY: the dynamic shared memory base.
    let smem_base = unsafe { smem::shared_addr(smem_ptr) };
    let full = |stage: u32| smem_base + plan.full_barrier(stage);
    let empty = |stage: u32| smem_base + plan.empty_barrier(stage, shape);
    let ring = Ring::<STAGES>::at;
    // Key block `j` into its stage (the issuing thread only).
    let load = |j: u32| {
        // SAFETY: the stage of key block `j` is free (its last use released,
        // or never used); the tiles lie inside the scratch.
        unsafe { load_kv::<HEAD_DIM, BLOCK_N, STAGES>(p, (smem_base, plan, shape), kv, &job, walk, (j, j)) }
    };

    let producer = warpgroup == WARPGROUPS as u32;
    let issuer = team.0 == consumers;
    if issuer {
        // SAFETY: no thread uses the barriers before the block barrier
        // below; the fence makes their initialization visible to the copy
        // engine (async proxy).
        unsafe {
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
    if !producer {
        // SAFETY: Q rows below `job.rows` are inside Q.
        unsafe {
            let q = (job.q, job.q_row_stride);
            let tile_rows = RowLayout::CoreMatrices { row_bytes: HEAD_DIM as u32 };
            load_rows_strided::<HEAD_DIM, Rolled>(smem_base + plan.q, tile_rows, q, shape.block_m, job.rows, team);
            cp_async::commit_group();
        }
        // Every stage's rows of ones (f16 1.0 pairs; none where
        // `Pv::SUM_ROWS` is 0): one word per thread and stage.
        if Pv::SUM_ROWS > 0 && team.0 < Pv::SUM_ROWS * block_n * 2 / 4 {
            for stage in 0..stages {
                let at = plan.ones_rows(stage, shape) + 4 * team.0;
                // SAFETY: inside a stage's rows of ones, 4-byte aligned.
                unsafe { *(smem_ptr.add(at as usize) as *mut u32) = 0x3C00_3C00 };
            }
        }
        // The first key block's empty `Vt` slots (the first `lead` tiles of
        // the first stage) as zeros: their keys' P is 0, and 0 times whatever
        // shared memory held could be NaN. (Their K slots need nothing: those
        // scores are `-inf`.)
        let words = walk.lead * kv.vt_tile_bytes() / 16;
        let mut word = team.0;
        while word < words {
            let at = plan.vt_stage(0, shape) + 16 * word;
            // SAFETY: inside the first stage's first `lead` `Vt` tiles, which
            // no copy writes; 16-byte aligned.
            unsafe { *(smem_ptr.add(at as usize) as *mut [u32; 4]) = [0; 4] };
            word += team.1;
        }
    }
    // Q and the zeros landed and visible to the consumers and the async
    // proxy, the barriers initialized, before the roles go their ways.
    // SAFETY: block-uniform.
    unsafe {
        cp_async::wait_group(0);
        fence::proxy_async_shared();
        bar::sync_threads();
    }

    if producer {
        // SAFETY: the whole warpgroup, converged.
        unsafe { wgmma::set_max_registers::<false, PRODUCER_REGISTERS>() };
        if issuer {
            // The rest of the key blocks, each into its stage once every
            // consumer warp released the stage's last use.
            for j in stages..key_blocks {
                // SAFETY: the barrier was initialized above; every consumer
                // warp arrives on its phase for block `j - STAGES` after its
                // last product reading it.
                unsafe { mbarrier::wait(empty(ring(j - stages).stage), ring(j - stages).parity) };
                load(j);
            }
        }
        return;
    }
    // SAFETY: the whole warpgroup, converged.
    unsafe {
        match WARPGROUPS {
            2 => wgmma::set_max_registers::<true, { consumer_registers(2) }>(),
            // 3, the only other count the assertion above lets through.
            _ => wgmma::set_max_registers::<true, { consumer_registers(3) }>(),
        }
    }

    let (qk_descs, pv_descs) =
        kv_descriptors::<HEAD_DIM, BLOCK_N, STAGES, QK_STEPS, PV_STEPS>((smem_base, plan, shape), kv, warpgroup);
    // Waits until key block `j`'s tiles have landed (in the async proxy).
    let tiles_landed = |j: u32| {
        // SAFETY: the barrier was initialized before the block barrier
        // above; its phase for block j completes once the copies land.
        unsafe { mbarrier::wait(full(ring(j).stage), ring(j).parity) };
    };
    let lead_keys = walk.lead * TILE_KEYS;
    let mut o = [[0f32; 4]; O_TILES];
    let mut rows = Rows::EMPTY;
    // The row sums where the tensor cores keep them (none with E4M3 P·V).
    let mut sums = [[0f32; 4]; 1];
    let mut s = [[0f32; 4]; S_TILES];
    // Per row, the score past which the lazy maximum would move
    // (`Rows::softmax_lazy`): none has been seen yet.
    let mut over_at = [f32::NEG_INFINITY; 2];
    let geometry =
        MaskGeometry { row: job.row0 + warp_row + group, col: 2 * quad, seq_q: job.seq_q, seq_kv: job.seq_kv, causal };
    // Key block `j`'s mask, if it needs one (counted from the first block's
    // first slot, the keys and the causal diagonal move by `lead_keys`).
    let masked_from = schedule::first_masked_block(job.row0, block_n, job.seq_q, job.seq_kv + lead_keys, causal);
    let mask_of = |j: u32| (j >= masked_from).then_some((geometry, (j * block_n).wrapping_sub(lead_keys)));
    // Shapes and masks key block `j`'s scores by a windowed score policy
    // (the causal mask is left to the softmax: `mask_of`). (Two closures
    // and a branch at each use, as in `super::forward`: so the kernels
    // without a window build as they did before the policy.)
    let shape_window = |s: &mut [[f32; 4]; S_TILES], j: u32| {
        Sc::shape(p, &job, s, (geometry, shape.block_m), (walk.first_tile + j) * block_n);
    };
    let score_factor = if Sc::WINDOWED { Sc::softmax_factor(p, &job) } else { job.score_scale_log2 };

    tiles_landed(0);
    // SAFETY: warpgroup-uniform; Q and K of block 0 are written and fenced.
    unsafe { issue_first_scores(&mut s, qk_descs(0)) };
    // SAFETY: warpgroup-uniform; converged warps.
    let mut p_frag: [[u32; 4]; PV_STEPS] = unsafe {
        wgmma::wait_group(0);
        if walk.lead > 0 && !Sc::WINDOWED {
            // The `lead` empty slots by tile, the keys past them masked only
            // where a later block would be.
            let mask = (masked_from == 0).then_some((geometry, 0u32.wrapping_sub(lead_keys)));
            rows.softmax_past_lead::<E, SOFTMAX_CHAINS, S_TILES>(&mut s, walk.lead, score_factor, &mut over_at, mask);
        } else {
            let mask = if Sc::WINDOWED {
                shape_window(&mut s, 0);
                None
            } else {
                mask_of(0)
            };
            rows.softmax_lazy::<E, SOFTMAX_CHAINS, _>(&mut s, score_factor, LAZY_MAX_SLACK, &mut over_at, mask);
        }
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
        // written and fenced.
        unsafe { issue_scores_and_pv::<Pv, _, _, _, _>(&mut s, next_qk, &mut o, &mut sums, &mut p_frag, pv_descs(j)) };
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
                rows.softmax_lazy::<E, SOFTMAX_CHAINS, _>(&mut s, score_factor, LAZY_MAX_SLACK, &mut over_at, mask)
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
