//! `wgsplit`: `split`'s key groups on Hopper's warpgroup tensor cores
//! (sm_90a only), for short sequences.
//!
//! A block owns 64 query rows (one `wgmma` M) of one (batch, head) and
//! `SPLITS` warpgroups; warpgroup `g` is key group `g` and walks key blocks
//! `g, g + SPLITS, ..` of 64 keys with its own `STAGES`-deep K/V buffers,
//! completing on `mbarrier`s as in [`super::split`]. Unlike `split`, no
//! operand is converted per row warp: per key block, each warpgroup
//!
//! 1. waits for K and V (E4M3) in its buffers;
//! 2. issues `S = Q·K^T` on `wgmma.m64n64k32.e4m3` with Q and K read from
//!    shared memory as they arrived ([`super::wgmma::issue_scores`]);
//! 3. meanwhile writes `Vt`, its V tile transposed to f16, once for the
//!    warpgroup ([`transpose_v`]), and syncs the warpgroup on a named barrier;
//! 4. runs the online softmax on the accumulators ([`online::Rows`]);
//! 5. adds `P·V` on `wgmma.m64nDk16.f16`, P from registers, `Vt` by
//!    descriptor ([`super::wgmma::issue_pv`]), and waits for it.
//!
//! So `wgmma`'s prepass kernel (and its launch) is not needed: each V tile
//! is transposed by the one warpgroup that uses it. Then the groups merge
//! exactly as `split`'s do ([`super::merge`]); the accumulator layout of a
//! warpgroup's four warps is that of four `split` row warps.

use super::block::{BlockJob, load_rows};
use super::merge::MergeArea;
use super::online::{self, MaskGeometry, Rows};
use super::wgmma::{BLOCK_N, issue_pv, issue_scores};
use crate::arch::{bar, cvt, fence, grid_dep, mbarrier, smem, sreg, wgmma};
use crate::layout::{RowLayout, kmajor_desc};
use crate::params::AttnParams;
use crate::schedule;
use crate::tiles::{SplitSmemPlan, TileShape};

/// 8-column accumulator tiles of S.
const S_TILES: usize = BLOCK_N / 8;
/// Threads per key group: one warpgroup.
const GROUP_THREADS: u32 = 128;

/// `Vt` row layout: head column `d` is a row of `BLOCK_N` f16 keys, in the
/// K-major core matrices that [`issue_pv`]'s descriptors read.
const VT_ROWS: RowLayout = RowLayout::CoreMatrices { row_bytes: 2 * BLOCK_N as u32 };

/// `[col0, col1, col2, col3]` of four 4-byte rows `w` (bytes = columns):
/// column `c` is `[w0.c, w1.c, w2.c, w3.c]`, a 4x4 byte transpose in six
/// `prmt`s.
#[inline(always)]
fn byte_columns(w: [u32; 4]) -> [u32; 4] {
    let low01 = cvt::byte_perm::<0x5140>(w[0], w[1]); // [w0.0, w1.0, w0.1, w1.1]
    let low23 = cvt::byte_perm::<0x5140>(w[2], w[3]);
    let high01 = cvt::byte_perm::<0x7362>(w[0], w[1]); // [w0.2, w1.2, w0.3, w1.3]
    let high23 = cvt::byte_perm::<0x7362>(w[2], w[3]);
    [
        cvt::byte_perm::<0x5410>(low01, low23),
        cvt::byte_perm::<0x7632>(low01, low23),
        cvt::byte_perm::<0x5410>(high01, high23),
        cvt::byte_perm::<0x7632>(high01, high23),
    ]
}

/// Writes the group's V tile (E4M3, `BLOCK_N` rows of `HEAD_DIM` bytes at
/// shared offset `v_tile`) transposed and converted (exactly) to f16 at
/// `vt_tile` ([`VT_ROWS`]), by the group's 128 threads (`member` = this
/// thread's index among them). A thread's unit is 4 head columns x 8 keys:
/// eight 4-byte words (one per key row; 16 lanes read 64 consecutive bytes
/// of a row), two byte transposes, and one 16-byte `Vt` core-matrix row per
/// column.
///
/// # Safety
/// `smem` is the dynamic shared memory base; both tiles inside it, the V
/// tile landed; no `wgmma` reads `vt_tile` meanwhile.
#[inline(always)]
unsafe fn transpose_v<const HEAD_DIM: usize>(smem: *mut u8, v_tile: u32, vt_tile: u32, member: u32) {
    let column_quads = HEAD_DIM as u32 / 4;
    let units = column_quads * (BLOCK_N as u32 / 8);
    for unit in (member..units).step_by(GROUP_THREADS as usize) {
        let (quad, key_chunk) = (unit % column_quads, unit / column_quads);
        let word = |key: u32| {
            let at = v_tile + (8 * key_chunk + key) * HEAD_DIM as u32 + 4 * quad;
            // SAFETY: inside the V tile (4-byte aligned).
            unsafe { *(smem.add(at as usize) as *const u32) }
        };
        let first = byte_columns([word(0), word(1), word(2), word(3)]);
        let second = byte_columns([word(4), word(5), word(6), word(7)]);
        for c in 0..4 {
            let halves = |x: u32| [cvt::e4m3x2_to_f16x2(x as u16), cvt::e4m3x2_to_f16x2((x >> 16) as u16)];
            let [k01, k23] = halves(first[c]);
            let [k45, k67] = halves(second[c]);
            let at = vt_tile + VT_ROWS.offset(4 * quad + c as u32, 16 * key_chunk);
            // SAFETY: one 16-byte core-matrix row of the Vt tile (16-byte aligned).
            unsafe { *(smem.add(at as usize) as *mut [u32; 4]) = [k01, k23, k45, k67] };
        }
    }
}

/// The exponent this kernel uses: always unfused (`softmax::exponent`), as
/// `split`'s.
const UNFUSED: bool = false;

/// The kernel body. `SPLITS` warpgroups (key groups), `QK_STEPS = HEAD_DIM
/// / 32`, `O_TILES = HEAD_DIM / 8`, `SLICE = O_TILES / SPLITS` (the output
/// tiles each group finishes in the merge).
///
/// # Safety
/// `p` must describe valid device buffers (host-validated); the block must
/// have `128 * SPLITS` threads and `SplitSmemPlan::with_vt(..).total` bytes
/// of dynamic shared memory.
#[inline(always)]
pub unsafe fn forward<
    const HEAD_DIM: usize,
    const STAGES: usize,
    const SPLITS: usize,
    const QK_STEPS: usize,
    const O_TILES: usize,
    const SLICE: usize,
>(
    p: &AttnParams,
) {
    const {
        assert!(QK_STEPS * 32 == HEAD_DIM && O_TILES * 8 == HEAD_DIM && SLICE * SPLITS == O_TILES);
        assert!((HEAD_DIM == 64 || HEAD_DIM == 128) && STAGES >= 1 && SPLITS >= 1 && SPLITS <= 15);
    };
    let shape = TileShape {
        head_dim: HEAD_DIM as u32,
        block_m: 64,
        block_n: BLOCK_N as u32,
        stages: STAGES as u32,
        warps: 4 * SPLITS as u32,
        splits: SPLITS as u32,
    };
    let plan = SplitSmemPlan::with_vt(shape);
    let tile_rows = RowLayout::CoreMatrices { row_bytes: HEAD_DIM as u32 };
    let v_rows = RowLayout::Padded { stride: HEAD_DIM as u32 };
    let threads = shape.threads();
    let block_n = BLOCK_N as u32;
    let thread = sreg::thread_idx_x();
    let lane = sreg::lane_id();
    let warp = sreg::warp_id();
    let (group, quad) = (lane / 4, lane % 4);
    let (row_warp, split) = (warp % 4, warp / 4);
    let member = thread - split * GROUP_THREADS;
    let team = (member, GROUP_THREADS);

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
            let k_dst = smem_base + plan.k_stage(split, stage);
            load_rows::<HEAD_DIM, false>(k_dst, tile_rows, job.k.wrapping_add(offset), block_n, valid, team);
            let v_dst = smem_base + plan.v_stage(split, stage);
            load_rows::<HEAD_DIM, false>(v_dst, v_rows, job.v.wrapping_add(offset), block_n, valid, team);
        }
    };

    // The barriers, as `split`'s: Q's, per group and stage "full" and
    // "empty", per group "done"; thread 0 initializes them.
    let q_barrier = smem_base + plan.q_barrier();
    let full = |stage: u32| smem_base + plan.full_barrier(split, stage);
    let empty = |stage: u32| smem_base + plan.empty_barrier(split, stage);
    // SAFETY: thread 0 alone initializes; nothing uses a barrier before the block barrier.
    unsafe {
        if thread == 0 {
            mbarrier::init(q_barrier, threads);
            for g in 0..SPLITS as u32 {
                for stage in 0..STAGES as u32 {
                    mbarrier::init(smem_base + plan.full_barrier(g, stage), GROUP_THREADS);
                    mbarrier::init(smem_base + plan.empty_barrier(g, stage), GROUP_THREADS);
                }
                mbarrier::init(smem_base + plan.done_barrier(g), GROUP_THREADS);
            }
        }
        bar::sync_threads();
    }
    // Prologue: Q (the whole block), then the group's first STAGES key blocks.
    // SAFETY: Q rows below `job.rows` are inside Q; one arrival per thread and barrier phase.
    unsafe {
        load_rows::<HEAD_DIM, false>(smem_base + plan.q, tile_rows, job.q, shape.block_m, job.rows, (thread, threads));
        mbarrier::arrive_after_copies(q_barrier);
        for i in 0..STAGES as u32 {
            if i < my_blocks {
                load_kv(i);
                mbarrier::arrive_after_copies(full(i));
            }
        }
        mbarrier::wait(q_barrier, 0);
    }

    let mut rows = Rows::EMPTY;
    let mut o = [[0f32; 4]; O_TILES];
    let mut s = [[0f32; 4]; S_TILES];
    let geometry =
        MaskGeometry { row: job.row0 + 16 * row_warp + group, col: 2 * quad, seq_q: p.seq_q, seq_kv: p.seq_kv, causal };
    let q_tile = smem_base + plan.q;
    // Each group walks its own key blocks: no block barrier in the loop.
    for i in 0..my_blocks {
        let stage = i % STAGES as u32;
        // The stage's i / STAGES-th use.
        let parity = (i / STAGES as u32) % 2;
        // SAFETY: the group's copies of block i arrive on this phase; then
        // they (and Q, waited for above) are made visible to `wgmma`.
        unsafe {
            mbarrier::wait(full(stage), parity);
            fence::proxy_async_shared();
        }
        let k_tile = smem_base + plan.k_stage(split, stage);
        // Descriptors computed and pinned before `wgmma.fence` (see `wgmma`).
        let mut qk: [[u64; 2]; QK_STEPS] = core::array::from_fn(|ks| {
            let k_byte = 32 * ks as u32;
            [kmajor_desc(q_tile, HEAD_DIM as u32, 0, k_byte), kmajor_desc(k_tile, HEAD_DIM as u32, 0, k_byte)]
        });
        qk.iter_mut().flatten().for_each(wgmma::pin_u64);
        s.iter_mut().flatten().for_each(wgmma::pin_f32);
        // SAFETY: warpgroup-uniform; Q and K are landed and fenced.
        unsafe {
            wgmma::fence();
            issue_scores(&mut s, &qk);
        }
        // While S is computed: Vt of this block, then the group syncs (its
        // named barrier, 1 + split) so every thread's part is written.
        let vt_tile = plan.vt_stage(split, stage);
        // SAFETY: the V tile landed; no `wgmma` reads this stage's Vt (the
        // group's P·V of the block before it in this stage has completed).
        unsafe {
            transpose_v::<HEAD_DIM>(smem_ptr, plan.v_stage(split, stage), vt_tile, member);
            fence::proxy_async_shared();
            bar::sync_named(1 + split, GROUP_THREADS);
        }
        let key0 = (split + i * SPLITS as u32) * block_n;
        let masked = schedule::block_needs_mask(job.row0, key0, block_n, p.seq_q, p.seq_kv, causal);
        // SAFETY: warpgroup-uniform; converged warps.
        let alpha = unsafe {
            wgmma::wait_group(0);
            rows.softmax::<UNFUSED, _>(&mut s, job.score_scale_log2, masked.then_some((geometry, key0)))
        };
        online::rescale(&mut o, alpha);
        let mut p_frag: [[u32; 4]; S_TILES / 2] = online::p_fragments(&s);
        let mut pv: [u64; S_TILES / 2] =
            core::array::from_fn(|kk| kmajor_desc(smem_base + vt_tile, 2 * block_n, 0, 32 * kk as u32));
        pv.iter_mut().for_each(wgmma::pin_u64);
        o.iter_mut().flatten().for_each(wgmma::pin_f32);
        p_frag.iter_mut().flatten().for_each(wgmma::pin_u32);
        // SAFETY: warpgroup-uniform; Vt written and fenced by every thread
        // of the group before its barrier; O_TILES is 8 or 16.
        unsafe {
            wgmma::fence();
            issue_pv(&mut o, &p_frag, &pv);
            wgmma::wait_group(0);
        }
        // Refill the stage with block i + STAGES once the whole group is done with block i.
        if i + (STAGES as u32) < my_blocks {
            // SAFETY: uniform over the group; one arrival per thread and phase.
            unsafe {
                mbarrier::arrive(empty(stage));
                mbarrier::wait(empty(stage), parity);
            }
            load_kv(i + STAGES as u32);
            // SAFETY: as above.
            unsafe { mbarrier::arrive_after_copies(full(stage)) };
        }
    }

    // The next kernel may launch now (after the key loop; see `grid_dep`).
    grid_dep::launch_dependents();
    // Merge, as `split`'s (see `merge`): the group's exchange slots reuse
    // its tiles once all its threads are done with them.
    let merge =
        MergeArea { stats: plan.stats, exchange: plan.kv, group_stride: plan.group_bytes, block_m: shape.block_m };
    let local_rows = [16 * row_warp + group, 16 * row_warp + group + 8];
    let done = smem_base + plan.done_barrier(split);
    // SAFETY: uniform over the group (one arrival per thread); then every
    // copy of the group has landed and no thread or `wgmma` of it reads its tiles.
    unsafe {
        mbarrier::arrive(done);
        mbarrier::wait(done, 0);
        merge.publish_stats(smem_ptr, split, local_rows, &rows, quad);
        merge.publish_partials(smem_ptr, (split, row_warp, lane), &o);
        bar::sync_threads();
    }
    // SAFETY: stats and partials are published; SLICE * SPLITS == O_TILES.
    let slice = unsafe {
        merge.finish_slice::<O_TILES, SPLITS, SLICE>(smem_ptr, (split, row_warp, lane), local_rows, job.v_scale)
    };
    // Tile t holds head columns 8t .. 8t + 7 (the `wgmma` layout).
    for (i, tile) in slice.iter().enumerate() {
        let col = 8 * (split * SLICE as u32 + i as u32) + 2 * quad;
        for h in 0..2 {
            let row = local_rows[h];
            if row < job.rows {
                let packed = cvt::pack_f16x2(tile[2 * h], tile[2 * h + 1]);
                // SAFETY: row < job.rows, col + 1 < HEAD_DIM: inside the block's output rows; 4-byte aligned.
                unsafe { *(job.o.add((row * HEAD_DIM as u32 + col) as usize) as *mut u32) = packed };
            }
        }
    }
}
