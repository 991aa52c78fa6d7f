//! `wsplit`: attention for short sequences on Hopper's warpgroup tensor-core
//! instructions (sm_90a only).
//!
//! The `split` schedule on `wgmma`: a block owns 64 query rows of one
//! (batch, head) and `SPLITS` warpgroups; warpgroup `g` walks key blocks
//! `g, g + SPLITS, g + 2 SPLITS, ..` (64 keys each) with its own
//! `STAGES`-deep K/V buffers, so a block's chain is `1 / SPLITS` of its key
//! blocks. Per key block, each warpgroup:
//!
//! 1. has K (E4M3, in the core-matrix layout `wgmma` reads) and V (E4M3,
//!    plain rows) brought into its buffers by `cp.async`;
//! 2. issues `S = Q·K^T` (`wgmma.m64n64k32.e4m3`, Q and K from shared
//!    memory: no FP8 emulation, unlike `mma.sync` on sm_90) and, while the
//!    tensor cores run it, transposes its V tile into f16 `Vt`
//!    ([`transpose_v`]; `wgmma` reads an FP8 or f16 B operand only K-major,
//!    and the `wgmma` variant's prepass kernel would cost a launch);
//! 3. runs the online softmax on S ([`online::Rows`]);
//! 4. adds `P·V` (`wgmma.m64nDk16.f16`, P from registers, `Vt` from shared
//!    memory).
//!
//! The warpgroups step together (two block barriers per step; a warpgroup
//! whose key blocks ran out idles) and then merge through shared memory
//! ([`super::merge`]).

use super::block::{BlockJob, load_rows};
use super::merge::MergeArea;
use super::online::{self, MaskGeometry, Rows};
use super::wgmma::{BLOCK_N, issue_pv, issue_scores};
use crate::arch::{bar, cp_async, cvt, fence, smem, sreg, wgmma};
use crate::layout::{RowLayout, kmajor_desc};
use crate::params::AttnParams;
use crate::schedule;
use crate::tiles::{TileShape, WsplitSmemPlan};

/// 8-column accumulator tiles of S.
const S_TILES: usize = BLOCK_N / 8;

/// The exponent this kernel uses: unfused (`softmax::exponent`), so one
/// body serves every scale.
const UNFUSED: bool = false;

/// Threads of one warpgroup.
const GROUP_THREADS: u32 = 128;

/// Sixteen bytes, aligned so that one `st.shared.v4` writes them.
#[repr(C, align(16))]
struct Chunk([u32; 4]);

/// Writes the group's V tile (`BLOCK_N` E4M3 rows of `HEAD_DIM` bytes at
/// byte offset `v`) transposed to f16 at `vt` (`HEAD_DIM` rows of
/// `BLOCK_N` keys in the core-matrix layout `wgmma` reads K-major); thread
/// `t` of the group's 128.
///
/// Per pass, thread `t` takes head columns `4 (t % (HEAD_DIM / 4)) .. + 3`
/// of 8 consecutive keys: it reads one 4-byte word from each of the 8 key
/// rows, regroups them per column ([`cvt::e4m3_rows_to_f16x2_columns`], two
/// keys at a time, exact) and writes 16 bytes (8 keys) into each of its 4
/// `Vt` rows. One pass covers `8 * 128 / (HEAD_DIM / 4)` keys.
///
/// # Safety
/// `smem` is the dynamic shared memory base; both tiles inside it; the V
/// tile has landed for every thread of the group.
#[inline(always)]
unsafe fn transpose_v<const HEAD_DIM: usize>(smem: *mut u8, v: u32, vt: u32, t: u32) {
    let quads = HEAD_DIM as u32 / 4;
    let key_groups = GROUP_THREADS / quads;
    let col0 = 4 * (t % quads);
    let vt_layout = RowLayout::CoreMatrices { row_bytes: 2 * BLOCK_N as u32 };
    for pass in 0..BLOCK_N as u32 / (8 * key_groups) {
        let key0 = 8 * (t / quads + pass * key_groups);
        let words: [u32; 8] = core::array::from_fn(|i| {
            // SAFETY: a word of key row key0 + i of the V tile (4-byte aligned: col0 % 4 == 0).
            unsafe { *(smem.add((v + (key0 + i as u32) * HEAD_DIM as u32 + col0) as usize) as *const u32) }
        });
        // pairs[k][c]: column col0 + c of keys key0 + 2k, key0 + 2k + 1.
        let pairs: [[u32; 4]; 4] =
            core::array::from_fn(|k| cvt::e4m3_rows_to_f16x2_columns(words[2 * k], words[2 * k + 1]));
        for c in 0..4 {
            let chunk = Chunk([pairs[0][c], pairs[1][c], pairs[2][c], pairs[3][c]]);
            let at = vt + vt_layout.offset(col0 + c as u32, 2 * key0);
            // SAFETY: 16 bytes of Vt row col0 + c (16-byte aligned: key0 % 8 == 0).
            unsafe { *(smem.add(at as usize) as *mut Chunk) = chunk };
        }
    }
}

/// The kernel body. `SPLITS` warpgroups (key groups), `QK_STEPS =
/// HEAD_DIM / 32`, `O_TILES = HEAD_DIM / 8`.
///
/// # Safety
/// `p` must describe valid device buffers (host-validated); the block must
/// have `128 * SPLITS` threads and `WsplitSmemPlan::new(..).total` bytes of
/// dynamic shared memory.
#[inline(always)]
pub unsafe fn forward<
    const HEAD_DIM: usize,
    const SPLITS: usize,
    const STAGES: usize,
    const QK_STEPS: usize,
    const O_TILES: usize,
>(
    p: &AttnParams,
) {
    const {
        assert!(QK_STEPS * 32 == HEAD_DIM && O_TILES * 8 == HEAD_DIM);
        assert!((HEAD_DIM == 64 || HEAD_DIM == 128) && STAGES >= 2 && SPLITS >= 1);
    };
    let shape = TileShape {
        head_dim: HEAD_DIM as u32,
        block_m: 64,
        block_n: BLOCK_N as u32,
        stages: STAGES as u32,
        warps: 4 * SPLITS as u32,
        splits: SPLITS as u32,
    };
    let plan = WsplitSmemPlan::new(shape);
    let tile_rows = RowLayout::CoreMatrices { row_bytes: HEAD_DIM as u32 };
    let v_rows = RowLayout::Padded { stride: HEAD_DIM as u32 };
    let threads = shape.threads();
    let block_n = BLOCK_N as u32;
    let thread = sreg::thread_idx_x();
    let lane = sreg::lane_id();
    let warp = sreg::warp_id();
    let (group, quad) = (lane / 4, lane % 4);
    let (split, warp_row) = (warp / 4, 16 * (warp % 4));
    // This group's copies: (this thread's index in the group, the group's size).
    let team = (thread - split * GROUP_THREADS, GROUP_THREADS);

    // SAFETY: host-validated parameters.
    let job = unsafe { BlockJob::new::<HEAD_DIM>(p, shape.block_m) };
    let causal = p.causal != 0;
    let key_blocks = schedule::blocks(job.key_end, block_n);
    if key_blocks == 0 {
        // SAFETY: the block's own output rows.
        unsafe { job.zero_output::<HEAD_DIM>(threads) };
        return;
    }
    // This group's key blocks: split, split + SPLITS, ...
    let my_blocks = if split < key_blocks { (key_blocks - split).div_ceil(SPLITS as u32) } else { 0 };

    let smem_ptr = smem::dynamic_smem_base();
    // SAFETY: the dynamic shared memory base.
    let smem_base = unsafe { smem::shared_addr(smem_ptr) };
    let load_kv = |i: u32| {
        let stage = i % STAGES as u32;
        let key0 = (split + i * SPLITS as u32) * block_n;
        let valid = (p.seq_kv - key0).min(block_n);
        let offset = key0 as usize * HEAD_DIM;
        // SAFETY: uniform over the group; key rows below `valid` are inside K and V.
        unsafe {
            let k_dst = smem_base + plan.k_stage(split, stage, shape);
            load_rows::<HEAD_DIM>(k_dst, tile_rows, job.k.wrapping_add(offset), block_n, valid, team);
            let v_dst = smem_base + plan.v_stage(split, stage, shape);
            load_rows::<HEAD_DIM>(v_dst, v_rows, job.v.wrapping_add(offset), block_n, valid, team);
        }
    };

    // Prologue: Q (the whole block), then each group's first STAGES - 1 key
    // blocks, one commit group each.
    // SAFETY: Q rows below `job.rows` are inside Q.
    unsafe {
        load_rows::<HEAD_DIM>(smem_base + plan.q, tile_rows, job.q, shape.block_m, job.rows, (thread, threads));
        cp_async::commit_group();
    }
    for i in 0..STAGES as u32 - 1 {
        if i < my_blocks {
            load_kv(i);
        }
        // SAFETY: closes this thread's copies (possibly an empty group).
        unsafe { cp_async::commit_group() };
    }

    let mut rows = Rows::EMPTY;
    let mut o = [[0f32; 4]; O_TILES];
    let mut s = [[0f32; 4]; S_TILES];
    let mut p_frag = [[0u32; 4]; S_TILES / 2];
    let geometry =
        MaskGeometry { row: job.row0 + warp_row + group, col: 2 * quad, seq_q: p.seq_q, seq_kv: p.seq_kv, causal };
    let vt_offset = plan.vt(split, shape);
    // The P·V descriptors: one per 16 keys of this group's Vt.
    let pv_descs: [u64; S_TILES / 2] =
        core::array::from_fn(|kk| kmajor_desc(smem_base + vt_offset, 2 * block_n, 0, 32 * kk as u32));
    // Every group takes the same number of steps (group 0's count), so the
    // groups meet at block barriers; a group whose blocks ran out idles.
    let steps = key_blocks.div_ceil(SPLITS as u32);
    for i in 0..steps {
        let stage = i % STAGES as u32;
        // SAFETY: block-uniform; after the wait, the fence and the barrier
        // this group's key block (and Q) is in shared memory for every
        // thread and for the async proxy, and every group is past step
        // i - 1 (its Vt and its K/V stage are free).
        unsafe {
            cp_async::wait_group(STAGES as u32 - 2);
            fence::proxy_async_shared();
            bar::sync_threads();
        }
        if i + STAGES as u32 - 1 < my_blocks {
            load_kv(i + STAGES as u32 - 1);
        }
        // SAFETY: closes this thread's copies (possibly an empty group).
        unsafe { cp_async::commit_group() };

        // Warpgroup-uniform: whether this group has a key block in this step.
        let active = i < my_blocks;
        if active {
            let k_tile = smem_base + plan.k_stage(split, stage, shape);
            let mut descs: [[u64; 2]; QK_STEPS] = core::array::from_fn(|ks| {
                let k_byte = 32 * ks as u32;
                [
                    kmajor_desc(smem_base + plan.q, HEAD_DIM as u32, 0, k_byte),
                    kmajor_desc(k_tile, HEAD_DIM as u32, 0, k_byte),
                ]
            });
            descs.iter_mut().flatten().for_each(wgmma::pin_u64);
            s.iter_mut().flatten().for_each(wgmma::pin_f32);
            // SAFETY: warpgroup-uniform; Q and K are written and fenced.
            unsafe {
                wgmma::fence();
                issue_scores(&mut s, &descs);
            }
            // While S is computed: V of this block to f16 Vt, fenced for the
            // async proxy (the barrier below publishes it to the group).
            // SAFETY: the group's V tile has landed; Vt is free (barrier above).
            unsafe {
                transpose_v::<HEAD_DIM>(smem_ptr, plan.v_stage(split, stage, shape), vt_offset, team.0);
                fence::proxy_async_shared();
            }
            let key0 = (split + i * SPLITS as u32) * block_n;
            let masked = schedule::block_needs_mask(job.row0, key0, block_n, p.seq_q, p.seq_kv, causal);
            // SAFETY: warpgroup-uniform; converged warps.
            unsafe {
                wgmma::wait_group(0);
                let alpha =
                    rows.softmax::<UNFUSED, _>(&mut s, job.score_scale_log2, masked.then_some((geometry, key0)));
                online::rescale(&mut o, alpha);
            }
            p_frag = online::p_fragments(&s);
        }
        // SAFETY: block-uniform; every thread's Vt writes are done.
        unsafe { bar::sync_threads() };
        if active {
            let mut pv = pv_descs;
            pv.iter_mut().for_each(wgmma::pin_u64);
            o.iter_mut().flatten().for_each(wgmma::pin_f32);
            p_frag.iter_mut().flatten().for_each(wgmma::pin_u32);
            // SAFETY: warpgroup-uniform; Vt is written and fenced; O_TILES is
            // 8 or 16 (HEAD_DIM 64 or 128).
            unsafe {
                wgmma::fence();
                issue_pv(&mut o, &p_frag, &pv);
                wgmma::wait_group(0);
            }
        }
    }

    // Merge (see `merge`): publish this group's (max, sum) of the warp's rows.
    let merge =
        MergeArea { stats: plan.stats, scratch: plan.scratch, scratch_row: plan.scratch_row, block_m: shape.block_m };
    let local_rows = [warp_row + group, warp_row + group + 8];
    // SAFETY: converged warp.
    unsafe { merge.publish_stats(smem_ptr, split, local_rows, &rows, quad) };
    // SAFETY: block-uniform; every group is done with its buffers (the
    // scratch rows reuse them) and its stats are published.
    unsafe {
        cp_async::wait_group(0);
        bar::sync_threads();
    }
    // SAFETY: the stats are published.
    let shares = unsafe { merge.shares::<SPLITS>(smem_ptr, local_rows, &rows, job.v_scale) };
    // Scale this group's partial rows by their share into its scratch rows:
    // tile `t` holds columns `8 t + 2 quad, + 1` of the thread's two rows.
    for (t, tile) in o.iter().enumerate() {
        let col = 8 * t as u32 + 2 * quad;
        for h in 0..2 {
            let (share, no_key) = shares[h];
            let scaled = if no_key { [0.0; 2] } else { [tile[2 * h] * share, tile[2 * h + 1] * share] };
            // SAFETY: this group's scratch row (8-byte aligned: col is even).
            unsafe { *(smem_ptr.add(merge.scratch_at(split, local_rows[h], col)) as *mut [f32; 2]) = scaled };
        }
    }
    // SAFETY: block-uniform; publishes the scratch rows; then the sum.
    unsafe {
        bar::sync_threads();
        merge.store_sum::<HEAD_DIM, SPLITS>(smem_ptr, &job, thread, threads);
    }
}
