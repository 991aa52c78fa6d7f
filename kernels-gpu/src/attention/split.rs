//! `split`: attention for short sequences on `mma.sync` (sm_89 and sm_90).
//!
//! On a short sequence a query block has only a few key blocks, and the
//! `mma` kernel walks them one after the other: the block's time is that
//! chain. Here the key blocks are shared out instead. A block owns
//! `BLOCK_M = 16 * ROW_WARPS` query rows of one (batch, head) and
//! `ROW_WARPS * SPLITS` warps; warp `w` is row warp `w % ROW_WARPS` (rows
//! `16 (w % ROW_WARPS) ..`) of key group `w / ROW_WARPS`. Group `g` walks key
//! blocks `g, g + SPLITS, g + 2 SPLITS, ..` (for `split-n64` at D = 64,
//! those positions of a walk rotated by the query block:
//! `schedule::key_rotation`) with its own `STAGES`-deep K/V buffers, so a
//! block's chain is `1 / SPLITS` of its key blocks. The
//! groups do not wait for each other until the merge: their copies
//! complete on `mbarrier`s ("full" per stage: every thread of the group
//! arrives once its `cp.async` share has landed, or the group's issuer of
//! tensor copies expects their bytes, with V on a "V full" barrier of its
//! own at D = 64; "empty": every thread arrives when done reading a tile
//! whose stage is refilled). (A block barrier per step, which makes the
//! groups step together, measured slower at D = 128 and no faster at D =
//! 64; named group barriers made compute-sanitizer racecheck report
//! hazards across the merge's block barriers; see lab/.) Per key block,
//! each warp:
//!
//! 1. waits for K and V (E4M3) in its group's buffers;
//! 2. computes `S = Q·K^T` ([`warp_tile::scores`]: E4M3 `mma` on sm_89,
//!    f16 `mma` on converted operands on sm_90);
//! 3. runs the online softmax on the accumulators ([`online::Rows`]);
//! 4. adds `P·V` on `mma.m16n8k16.f16`, with V read as E4M3 and turned
//!    into f16 in registers ([`pv_e4m3`]; this permutes O's columns, see
//!    [`o_column`]).
//!
//! Then the groups merge ([`super::merge`]): each publishes its rows'
//! running maxima and sums and hands the other groups their slices of its
//! partial output; each group weighs and adds its slice
//! (`softmax::merge_splits`) and stores it as f16.

use super::block::{BlockJob, Rolled, load_rows, load_rows_strided};
use super::merge::{Exchange, MergeArea};
use super::online::{self, MaskGeometry, Rows};
use super::output::OutputFormat;
use super::pipeline::{self, Ring};
use super::walk::{KeyRows, Walk};
use super::warp_tile;
use crate::arch::{bar, cvt, grid_dep, ldmatrix, mbarrier, mma, smem, sreg, tma};
use crate::layout::RowLayout;
#[cfg(target_feature = "sm_90a")]
use crate::layout::swizzled_kmajor_desc;
use crate::params::{AttnParams, TileMaps};
use crate::schedule;
use crate::tiles::{SplitSmemPlan, TileShape};

/// The head column that accumulator column `n` (0..8) of O tile `tile`
/// holds after [`pv_e4m3`]: tiles come in groups of four per 32 columns;
/// within a group, tiles `2h` and `2h + 1` hold the even and the odd
/// columns of the 16-column half `h`.
#[inline(always)]
pub const fn o_column(tile: u32, n: u32) -> u32 {
    32 * (tile / 4) + 16 * ((tile / 2) % 2) + 2 * n + tile % 2
}

/// `o += P·V` for one key block: `p` the probabilities (`S_TILES`, 4 or 8,
/// 8-key accumulator tiles), V the block's E4M3 tile at `v_tile` (key rows
/// laid out as `rows`), 32 keys at a time ([`pv_32_keys`]: one loop over
/// the eight tiles of a 64-key block stayed rolled at D = 128 and put P in
/// local memory).
///
/// # Safety
/// Converged warp; `8 * S_TILES` key rows of `4 * O_TILES` readable bytes
/// at `v_tile`.
#[inline(always)]
unsafe fn pv_e4m3<const S_TILES: usize, const O_TILES: usize>(
    o: &mut [[f32; 4]; O_TILES],
    p: &[[f32; 4]; S_TILES],
    v_tile: u32,
    rows: RowLayout,
) {
    let low: [[f32; 4]; 4] = core::array::from_fn(|t| p[t]);
    // SAFETY: forwarded; keys 0..32.
    unsafe { pv_32_keys(o, &low, v_tile, rows, 0) };
    if S_TILES == 8 {
        let high: [[f32; 4]; 4] = core::array::from_fn(|t| p[4 + t]);
        // SAFETY: forwarded; keys 32..64.
        unsafe { pv_32_keys(o, &high, v_tile, rows, 32) };
    }
}

/// `o += P·V` for the 32 keys `key0 ..` of a key block: `p` their
/// probabilities (four 8-key accumulator tiles), V's E4M3 tile at `v_tile`.
///
/// Per 16 keys and 32 head columns, one `ldmatrix.x4.trans` reads V as
/// 16-bit elements (column pairs): lane (group `g`, quad `q`) receives, per
/// 8-key half and per 16-column half, the bytes `[V[2q][c], V[2q][c+1],
/// V[2q+1][c], V[2q+1][c+1]]` with `c = 2g` inside that half.
/// [`cvt::e4m3x4_to_f16x2_by_column`] makes that the `m16n8k16` B fragment
/// of column `c` (keys `2q, 2q+1`) and of column `c + 1`, so one O tile
/// takes the even columns of the half and the next tile the odd ones
/// ([`o_column`]).
///
/// # Safety
/// Converged warp; key rows `key0 .. key0 + 32` of `4 * O_TILES` readable
/// bytes at `v_tile`.
#[inline(always)]
unsafe fn pv_32_keys<const O_TILES: usize>(
    o: &mut [[f32; 4]; O_TILES],
    p: &[[f32; 4]; 4],
    v_tile: u32,
    rows: RowLayout,
    key0: u32,
) {
    let lane = sreg::lane_id();
    let (matrix, row) = (lane / 8, lane % 8);
    for kk in 0..2 {
        let a = online::p_fragment(p, kk);
        for chunk in 0..O_TILES / 4 {
            let key = key0 + kk as u32 * 16 + (matrix % 2) * 8 + row;
            let col = chunk as u32 * 32 + (matrix / 2) * 16;
            // SAFETY: converged warp; rows inside the V tile.
            let x = unsafe { ldmatrix::load_x4_trans(v_tile + rows.offset(key, col)) };
            for h in 0..2 {
                let [even_lo, odd_lo] = cvt::e4m3x4_to_f16x2_by_column(x[2 * h]);
                let [even_hi, odd_hi] = cvt::e4m3x4_to_f16x2_by_column(x[2 * h + 1]);
                // SAFETY: converged warp.
                unsafe {
                    mma::m16n8k16_f16(&mut o[4 * chunk + 2 * h], a, [even_lo, even_hi]);
                    mma::m16n8k16_f16(&mut o[4 * chunk + 2 * h + 1], a, [odd_lo, odd_hi]);
                }
            }
        }
    }
}

/// The exponent this kernel uses: always unfused (`softmax::exponent`);
/// the fused one measured no gain here and cost registers (see lab/).
type Unfused = online::Unfused;

/// How a `split` block's Q tile and its key groups' K and V tiles arrive
/// in shared memory: per architecture ([`Copies`]).
pub trait Arrival {
    /// The block's shared-memory plan (exchange slots apart from the K/V
    /// tiles if `exchange_apart`).
    fn plan(shape: TileShape, exchange_apart: bool) -> SplitSmemPlan;

    /// The arrivals that complete a phase of a barrier that `threads`
    /// threads' copies fill.
    fn fillers(threads: u32) -> u32;

    /// Whether V completes on a "V full" barrier of its own, so that Q·K^T
    /// waits for K alone.
    fn v_apart(head_dim: usize) -> bool;

    /// Whether this thread (`team`: its index in the group, the group's
    /// size) refills its group's stages, and so waits for them to be empty.
    fn refills(team: (u32, u32)) -> bool;

    /// The issuers fetch the tensor maps they will use (`maps`, the
    /// problem's).
    ///
    /// # Safety
    /// `maps` as the host made them.
    unsafe fn prefetch_maps(maps: u64, thread: u32, team: (u32, u32));

    /// Copies the block's Q tile (`block_m` rows from row `job.row0`, rows
    /// below `job.rows` inside Q) to `q_tile`, completing on `barrier`.
    ///
    /// # Safety
    /// Uniform over the block (thread `thread` of `threads`); the Q tile is free.
    unsafe fn load_q<const HEAD_DIM: usize, Pairing: TileRows>(
        q_tile: u32,
        rows: RowLayout,
        job: &BlockJob,
        block_m: u32,
        maps: u64,
        barrier: u32,
        team: (u32, u32),
    );

    /// Copies the `block_n` keys of K and V that `key_rows` locates
    /// ([`KeyRows`], asked only by the threads that issue copies) to the
    /// tiles `kv_dst` (laid out as `rows`) of `stage`, completing on its
    /// barriers (`(full, v_full)` give them per stage): V on "V full" with
    /// `v_apart`, else both on "full".
    ///
    /// # Safety
    /// Uniform over the group (`team`); the stage is free (first use, or
    /// its "empty" phase completed); the key rows lie inside K and V.
    #[allow(clippy::too_many_arguments)]
    unsafe fn load_kv<const HEAD_DIM: usize, Pairing: TileRows>(
        kv_dst: (u32, u32),
        stage: u32,
        barriers: (impl Fn(u32) -> u32, impl Fn(u32) -> u32),
        key_rows: impl Fn() -> KeyRows,
        block_n: u32,
        maps: u64,
        rows: RowLayout,
        team: (u32, u32),
        v_apart: bool,
    );
}

/// Tensor copies (sm_90a): the group's first thread issues its K and V
/// tiles, thread 0 the Q tile, into swizzled rows; their barriers expect
/// the bytes.
pub struct TensorCopies;

/// `cp.async` (sm_89): every thread copies its share of the rows into
/// padded rows, then arrives.
pub struct CpAsyncCopies;

/// How this build's tiles arrive.
#[cfg(target_feature = "sm_90a")]
pub type Copies = TensorCopies;
/// How this build's tiles arrive.
#[cfg(not(target_feature = "sm_90a"))]
pub type Copies = CpAsyncCopies;

impl Arrival for TensorCopies {
    #[inline(always)]
    fn plan(shape: TileShape, exchange_apart: bool) -> SplitSmemPlan {
        SplitSmemPlan::new_swizzled(shape, exchange_apart)
    }

    #[inline(always)]
    fn fillers(_threads: u32) -> u32 {
        1
    }

    // V apart measured faster at D = 64 (`split-n64` and `split`) and
    // slower at D = 128 (see lab/).
    #[inline(always)]
    fn v_apart(head_dim: usize) -> bool {
        head_dim == 64
    }

    #[inline(always)]
    fn refills(team: (u32, u32)) -> bool {
        team.0 == 0
    }

    #[inline(always)]
    unsafe fn prefetch_maps(maps: u64, thread: u32, team: (u32, u32)) {
        if team.0 == 0 {
            // SAFETY: the problem's maps (host-made with the parameters).
            unsafe {
                if thread == 0 {
                    tma::prefetch_map(maps);
                }
                tma::prefetch_map(maps + TileMaps::K_OFFSET);
                tma::prefetch_map(maps + TileMaps::V_OFFSET);
            }
        }
    }

    #[inline(always)]
    unsafe fn load_q<const HEAD_DIM: usize, Pairing: TileRows>(
        q_tile: u32,
        _rows: RowLayout,
        job: &BlockJob,
        block_m: u32,
        maps: u64,
        barrier: u32,
        (thread, _): (u32, u32),
    ) {
        if thread == 0 {
            // SAFETY: forwarded; the map zero-fills rows past Q.
            unsafe {
                mbarrier::arrive_expect_tx(barrier, block_m * HEAD_DIM as u32);
                tma::copy_box_3d(q_tile, maps, (0, Pairing::coord(job.row0), job.q_head as u32), barrier);
            }
        }
    }

    #[inline(always)]
    unsafe fn load_kv<const HEAD_DIM: usize, Pairing: TileRows>(
        (k_dst, v_dst): (u32, u32),
        stage: u32,
        (full, v_full): (impl Fn(u32) -> u32, impl Fn(u32) -> u32),
        key_rows: impl Fn() -> KeyRows,
        block_n: u32,
        maps: u64,
        _rows: RowLayout,
        team: (u32, u32),
        v_apart: bool,
    ) {
        if team.0 == 0 {
            let key_rows = key_rows();
            let at = (0, Pairing::coord(key_rows.row), key_rows.head);
            let tile_bytes = block_n * HEAD_DIM as u32;
            // SAFETY: forwarded; the box lies in the stage.
            unsafe {
                if v_apart {
                    mbarrier::arrive_expect_tx(full(stage), tile_bytes);
                    tma::copy_box_3d(k_dst, maps + TileMaps::K_OFFSET, at, full(stage));
                    mbarrier::arrive_expect_tx(v_full(stage), tile_bytes);
                    tma::copy_box_3d(v_dst, maps + TileMaps::V_OFFSET, at, v_full(stage));
                } else {
                    mbarrier::arrive_expect_tx(full(stage), 2 * tile_bytes);
                    tma::copy_box_3d(k_dst, maps + TileMaps::K_OFFSET, at, full(stage));
                    tma::copy_box_3d(v_dst, maps + TileMaps::V_OFFSET, at, full(stage));
                }
            }
        }
    }
}

impl Arrival for CpAsyncCopies {
    #[inline(always)]
    fn plan(shape: TileShape, exchange_apart: bool) -> SplitSmemPlan {
        SplitSmemPlan::new(shape, exchange_apart)
    }

    #[inline(always)]
    fn fillers(threads: u32) -> u32 {
        threads
    }

    #[inline(always)]
    fn v_apart(_head_dim: usize) -> bool {
        false
    }

    #[inline(always)]
    fn refills(_team: (u32, u32)) -> bool {
        true
    }

    #[inline(always)]
    unsafe fn prefetch_maps(_maps: u64, _thread: u32, _team: (u32, u32)) {}

    #[inline(always)]
    unsafe fn load_q<const HEAD_DIM: usize, Pairing: TileRows>(
        q_tile: u32,
        rows: RowLayout,
        job: &BlockJob,
        block_m: u32,
        _maps: u64,
        barrier: u32,
        team: (u32, u32),
    ) {
        // SAFETY: forwarded; Q rows below `job.rows` are inside Q; one
        // arrival per thread.
        unsafe {
            load_rows::<HEAD_DIM, Rolled>(q_tile, rows, job.q, block_m, job.rows, team);
            mbarrier::arrive_after_copies(barrier);
        }
    }

    #[inline(always)]
    unsafe fn load_kv<const HEAD_DIM: usize, Pairing: TileRows>(
        (k_dst, v_dst): (u32, u32),
        stage: u32,
        (full, _v_full): (impl Fn(u32) -> u32, impl Fn(u32) -> u32),
        key_rows: impl Fn() -> KeyRows,
        block_n: u32,
        _maps: u64,
        rows: RowLayout,
        team: (u32, u32),
        _v_apart: bool,
    ) {
        let at = key_rows();
        // SAFETY: forwarded; key rows below `at.valid` are inside K and V;
        // one arrival per thread and phase.
        unsafe {
            load_rows_strided::<HEAD_DIM, Rolled>(k_dst, rows, (at.k, at.stride), block_n, at.valid, team);
            load_rows_strided::<HEAD_DIM, Rolled>(v_dst, rows, (at.v, at.stride), block_n, at.valid, team);
            mbarrier::arrive_after_copies(full(stage));
        }
    }
}

/// `S = Q·K^T` of the warp's 16 rows for a key block of `S_TILES` (4 or
/// 8) accumulator tiles, 32 keys at a time ([`warp_tile::scores`] of four
/// tiles each): one call over eight tiles stayed a loop at D = 128 and put
/// S in local memory (a 128-byte stack).
///
/// # Safety
/// Converged warp; `8 * S_TILES` rows of `32 * QK_STEPS` readable bytes at
/// `k_tile` in layout `rows`.
#[inline(always)]
unsafe fn warp_scores<const QK_STEPS: usize, const S_TILES: usize>(
    q_frag: &warp_tile::QFragments<QK_STEPS>,
    k_tile: u32,
    rows: RowLayout,
) -> [[f32; 4]; S_TILES] {
    const { assert!(S_TILES == 4 || S_TILES == 8) };
    let q = core::array::from_ref(q_frag);
    // SAFETY: converged warp; keys 0..32 of the tile.
    let [low] = unsafe { warp_tile::scores::<QK_STEPS, 4, 1>(q, k_tile, rows) };
    if S_TILES == 4 {
        return core::array::from_fn(|t| low[t % 4]);
    }
    // SAFETY: converged warp; keys 32..64 (a whole number of swizzle
    // periods past the first: 2 or 4 KB).
    let [high] = unsafe { warp_tile::scores::<QK_STEPS, 4, 1>(q, k_tile + rows.offset(32, 0), rows) };
    core::array::from_fn(|t| if t < 4 { low[t] } else { high[t - 4] })
}

/// How a key group multiplies `S = Q·K^T` of its key block: a kernel's
/// policy.
pub trait ScoreProduct {
    /// Row warps the product needs per key group (0: any number). A
    /// warpgroup's walk is never rotated ([`schedule::key_rotation`]:
    /// measured no faster for it, see lab/).
    const GROUP_WARPS: usize;
    /// The warp's Q operand for [`ScoreProduct::scores`], read once from
    /// the Q tile (rows `row0 ..` of the warp).
    ///
    /// # Safety
    /// Converged warp; the Q tile landed, laid out as `rows`.
    unsafe fn q_fragments<const QK_STEPS: usize>(
        q_tile: u32,
        rows: RowLayout,
        row0: u32,
    ) -> warp_tile::QFragments<QK_STEPS>;
    /// The warp's scores of one key block in the `mma.sync` accumulator
    /// layout (`S_TILES` tiles of 8 keys).
    ///
    /// # Safety
    /// Converged warp (warpgroup-uniform for a warpgroup's product); the Q
    /// and K tiles landed, laid out as `rows`.
    unsafe fn scores<const QK_STEPS: usize, const S_TILES: usize>(
        q_frag: &warp_tile::QFragments<QK_STEPS>,
        q_tile: u32,
        k_tile: u32,
        rows: RowLayout,
    ) -> [[f32; 4]; S_TILES];
}

/// Each warp multiplies its own 16 rows on `mma.sync` ([`warp_scores`]),
/// with Q in registers.
pub struct WarpMma;

/// A key group of four row warps (a warpgroup, 64 query rows) multiplies
/// 64-key blocks on `wgmma` straight from the swizzled E4M3 Q and K tiles
/// ([`warpgroup_scores`]; `split-wg`, sm_90a): no Q fragments, no
/// conversion.
#[cfg(target_feature = "sm_90a")]
pub struct WarpgroupWgmma;

impl ScoreProduct for WarpMma {
    const GROUP_WARPS: usize = 0;

    #[inline(always)]
    unsafe fn q_fragments<const QK_STEPS: usize>(
        q_tile: u32,
        rows: RowLayout,
        row0: u32,
    ) -> warp_tile::QFragments<QK_STEPS> {
        // SAFETY: the caller's contract.
        unsafe { warp_tile::q_fragments(q_tile, rows, row0) }
    }

    #[inline(always)]
    unsafe fn scores<const QK_STEPS: usize, const S_TILES: usize>(
        q_frag: &warp_tile::QFragments<QK_STEPS>,
        _q_tile: u32,
        k_tile: u32,
        rows: RowLayout,
    ) -> [[f32; 4]; S_TILES] {
        // SAFETY: the caller's contract.
        unsafe { warp_scores::<QK_STEPS, S_TILES>(q_frag, k_tile, rows) }
    }
}

#[cfg(target_feature = "sm_90a")]
impl ScoreProduct for WarpgroupWgmma {
    const GROUP_WARPS: usize = 4;

    #[inline(always)]
    unsafe fn q_fragments<const QK_STEPS: usize>(
        _q_tile: u32,
        _rows: RowLayout,
        _row0: u32,
    ) -> warp_tile::QFragments<QK_STEPS> {
        // Never read: the group's `wgmma` reads Q from shared memory.
        core::array::from_fn(|_| Default::default())
    }

    #[inline(always)]
    unsafe fn scores<const QK_STEPS: usize, const S_TILES: usize>(
        _q_frag: &warp_tile::QFragments<QK_STEPS>,
        q_tile: u32,
        k_tile: u32,
        _rows: RowLayout,
    ) -> [[f32; 4]; S_TILES] {
        const { assert!(S_TILES == 8, "64-key blocks") };
        // SAFETY: the caller's contract: the group is a warpgroup walking
        // the same blocks; Q and this K tile landed, 1024-byte aligned.
        let s = unsafe { warpgroup_scores::<QK_STEPS>(q_tile, k_tile) };
        core::array::from_fn(|t| s[t])
    }
}

/// `S = Q·K^T` of one 64-key block for a key group that is a warpgroup
/// (four row warps, 64 query rows; [`WarpgroupWgmma`]): one
/// `wgmma.m64n64k32.e4m3` per 32 head columns on descriptors of the
/// swizzled E4M3 Q and K tiles ([`swizzled_kmajor_desc`]), waited for.
/// Warp `w` of the group receives the scores of its rows `16w ..` in the
/// `mma.sync` accumulator layout, 8 tiles of 8 keys, as
/// [`warp_tile::scores`] returns them. (Through the `wgmma` kernel's
/// accumulator cast these landed in local memory; the flat array and
/// the spelled-out products keep them in registers.)
///
/// # Safety
/// Warpgroup-uniform (all four warps of the group, converged); both tiles
/// landed (their barriers waited for); `QK_STEPS` 2 or 4 (64 or 128 bytes
/// per row), rows swizzled as tensor copies write them, each tile at a
/// multiple of 1024 bytes.
#[cfg(target_feature = "sm_90a")]
#[inline(always)]
unsafe fn warpgroup_scores<const QK_STEPS: usize>(q_tile: u32, k_tile: u32) -> [[f32; 4]; 8] {
    use crate::arch::wgmma;
    let row_bytes = 32 * QK_STEPS as u32;
    let descs = |k_byte0: u32| {
        (swizzled_kmajor_desc(q_tile, row_bytes, k_byte0), swizzled_kmajor_desc(k_tile, row_bytes, k_byte0))
    };
    let mut acc = [0f32; 32];
    // SAFETY: the caller's contract; the fence orders the accumulators'
    // earlier register writes before the asynchronous products.
    unsafe {
        for x in acc.iter_mut() {
            wgmma::pin_f32(x);
        }
        wgmma::fence();
        let (q, k) = descs(0);
        wgmma::m64n64k32_e4m3::<0>(&mut acc, q, k);
        let (q, k) = descs(32);
        wgmma::m64n64k32_e4m3::<1>(&mut acc, q, k);
        if QK_STEPS == 4 {
            let (q, k) = descs(64);
            wgmma::m64n64k32_e4m3::<1>(&mut acc, q, k);
            let (q, k) = descs(96);
            wgmma::m64n64k32_e4m3::<1>(&mut acc, q, k);
        }
        wgmma::commit_group();
        wgmma::wait_group(0);
        for x in acc.iter_mut() {
            wgmma::pin_f32(x);
        }
    }
    core::array::from_fn(|t| [acc[4 * t], acc[4 * t + 1], acc[4 * t + 2], acc[4 * t + 3]])
}

/// How the rows of the Q, K and V tiles lie: a kernel's policy.
pub trait TileRows {
    /// Tile rows per stored (swizzled) row.
    const ROWS_PER_LINE: u32;
    /// The tiles' layout, given the plan's.
    fn layout(plan_rows: RowLayout) -> RowLayout;
    /// The tensor-copy row coordinate of tile row `row`.
    fn coord(row: u32) -> u32;
}

/// One tile row per row, as the plan lays them out.
pub struct PlanRows;

/// Two 64-byte rows to a 128-byte swizzled row (`RowLayout::SwizzledPairs`):
/// tensor copies at D = 64, for even query and key lengths (the host
/// encodes the maps so).
pub struct PairRows;

impl TileRows for PlanRows {
    const ROWS_PER_LINE: u32 = 1;

    #[inline(always)]
    fn layout(plan_rows: RowLayout) -> RowLayout {
        plan_rows
    }

    #[inline(always)]
    fn coord(row: u32) -> u32 {
        row
    }
}

impl TileRows for PairRows {
    const ROWS_PER_LINE: u32 = 2;

    #[inline(always)]
    fn layout(_: RowLayout) -> RowLayout {
        RowLayout::SwizzledPairs
    }

    #[inline(always)]
    fn coord(row: u32) -> u32 {
        row / 2
    }
}

/// The kernel body. `ROW_WARPS` warps per key group, `SPLITS` key groups,
/// `QK_STEPS = HEAD_DIM / 32`, `O_TILES = HEAD_DIM / 8`, `S_TILES =
/// BLOCK_N / 8`, `SLICE = O_TILES / SPLITS` (the output tiles each group
/// finishes in the merge); `SOFTMAX_CHAINS` (1 or 4): how each row's block maximum and sum are
/// folded (`online::fold_row`); `Ex`: where the merge's exchange slots
/// lie; `Pairing`: how the rows of the Q, K and V tiles lie.
///
/// # Safety
/// `p` must describe valid device buffers (host-validated; on sm_90a with
/// the problem's [`TileMaps`]); the block must have `ROW_WARPS * SPLITS * 32` threads and
/// `SplitSmemPlan::new(.., Ex::apart()).total` bytes of dynamic shared memory.
#[inline(always)]
pub unsafe fn forward<
    const HEAD_DIM: usize,
    const BLOCK_N: usize,
    const STAGES: usize,
    const ROW_WARPS: usize,
    const SPLITS: usize,
    const QK_STEPS: usize,
    const O_TILES: usize,
    const S_TILES: usize,
    const SLICE: usize,
    const SOFTMAX_CHAINS: usize,
    Ex: Exchange,
    Pairing: TileRows,
    Qk: ScoreProduct,
    W: Walk,
    Out: OutputFormat,
>(
    p: &AttnParams,
) {
    const {
        assert!(QK_STEPS * 32 == HEAD_DIM && O_TILES * 8 == HEAD_DIM && S_TILES * 8 == BLOCK_N);
        assert!(SLICE * SPLITS == O_TILES && SLICE % 2 == 0, "each group finishes whole (even, odd) tile pairs");
        assert!((BLOCK_N == 32 || BLOCK_N == 64) && O_TILES % 4 == 0 && STAGES >= 2);
        assert!(SPLITS >= 1 && (SOFTMAX_CHAINS == 1 || SOFTMAX_CHAINS == 4));
        assert!(Qk::GROUP_WARPS == 0 || (Qk::GROUP_WARPS == ROW_WARPS && S_TILES == 8), "a warpgroup of 64-key blocks");
        assert!(Qk::GROUP_WARPS == 0 || Pairing::ROWS_PER_LINE == 1, "pairs: `mma.sync` only");
        assert!(
            Pairing::ROWS_PER_LINE == 1 || (cfg!(target_feature = "sm_90a") && HEAD_DIM == 64),
            "pairs: tensor copies of 64-byte rows"
        );
    };
    let shape = TileShape {
        head_dim: HEAD_DIM as u32,
        block_m: 16 * ROW_WARPS as u32,
        block_n: BLOCK_N as u32,
        stages: STAGES as u32,
        warps: (ROW_WARPS * SPLITS) as u32,
        splits: SPLITS as u32,
    };
    let plan = Copies::plan(shape, Ex::apart());
    let tile_rows = Pairing::layout(plan.rows);
    let threads = shape.threads();
    let maps = p.tile_maps;
    let block_n = BLOCK_N as u32;
    let thread = sreg::thread_idx_x();
    let lane = sreg::lane_id();
    let warp = sreg::warp_id();
    let (group, quad) = (lane / 4, lane % 4);
    let (row_warp, split) = (warp % ROW_WARPS as u32, warp / ROW_WARPS as u32);
    let group_threads = 32 * ROW_WARPS as u32;
    // This group's copies: (this thread's index in the group, the group's size).
    let team = (thread - split * group_threads, group_threads);

    // SAFETY: the problem's maps.
    unsafe { Copies::prefetch_maps(maps, thread, team) };
    // SAFETY: host-validated parameters.
    let job = unsafe { W::job::<HEAD_DIM>(p, (shape.block_m, block_n)) };
    let causal = p.causal != 0;
    let key_blocks = schedule::blocks(job.key_end - job.key_begin, block_n);
    if key_blocks == 0 {
        // SAFETY: uniform over the block.
        unsafe { W::no_keys::<HEAD_DIM>(p, &job, threads) };
        return;
    }
    // This group's key blocks: split, split + SPLITS, ... of the block's
    // walk, which may start at a key block that depends on the query block
    // (`schedule::key_rotation`), so that a head's blocks do not all ask L2
    // for the same lines at once.
    let my_blocks = if split < key_blocks { (key_blocks - split).div_ceil(SPLITS as u32) } else { 0 };
    // (`schedule::walks_rotated` says which kernels do.)
    let rotated =
        const { schedule::walks_rotated(HEAD_DIM as u32, BLOCK_N as u32) && Qk::GROUP_WARPS == 0 && W::ROTATES };
    let rotation = if rotated { schedule::key_rotation(job.row0 / shape.block_m, key_blocks) } else { 0 };
    // The first key of the group's i-th key block, rotated. (Where the walk
    // is not rotated, the plain `(split + i * SPLITS) * block_n` is spelled
    // out at each use: through one shared closure LLVM compiled the other
    // entries to different PTX, which would have to be measured again.)
    let rotated_start = |i: u32| schedule::rotated_block(split + i * SPLITS as u32, rotation, key_blocks) * block_n;

    let smem_ptr = smem::dynamic_smem_base();
    // SAFETY: the dynamic shared memory base.
    let smem_base = unsafe { smem::shared_addr(smem_ptr) };
    let full = |stage: u32| smem_base + plan.full_barrier(split, stage);
    let v_full = |stage: u32| smem_base + plan.v_full_barrier(split, stage);
    // With `v_apart`, V's tensor copy completes on its own barrier ("V
    // full"), so a step's Q·K^T waits for K alone (`Arrival::v_apart` says
    // where). (LLVM sinks most of the softmax past the V wait; pinning it
    // before measured no gain, see lab/.)
    let v_apart = Copies::v_apart(HEAD_DIM);
    let empty = |stage: u32| smem_base + plan.empty_barrier(split, stage);
    let k_tile = |stage: u32| smem_base + plan.k_stage(split, stage, block_n);
    let v_tile = |stage: u32| smem_base + plan.v_stage(split, stage, block_n);
    // Copies key block i of the group into its stage, completing on the
    // stage's "full" barrier (V on its "V full" one with `v_apart`): with
    // tensor copies, the group's first thread issues both tiles (the others
    // do nothing); else every thread its share of the rows, then arrives.
    let load_kv = |i: u32| {
        let stage = Ring::<STAGES>::at(i).stage;
        let key0 = if rotated { rotated_start(i) } else { job.key_begin + (split + i * SPLITS as u32) * block_n };
        let k_dst = smem_base + plan.k_stage(split, stage, block_n);
        let v_dst = smem_base + plan.v_stage(split, stage, block_n);
        // SAFETY: uniform over the group; the stage is free (first use, or
        // its "empty" phase completed); key block i is inside K and V.
        unsafe {
            Copies::load_kv::<HEAD_DIM, Pairing>(
                (k_dst, v_dst),
                stage,
                (full, v_full),
                || W::key_rows::<HEAD_DIM>(p, &job, key0, block_n),
                block_n,
                maps,
                tile_rows,
                team,
                v_apart,
            )
        };
    };

    // The copies complete on barriers: Q's and per group and stage a "full"
    // one (with tensor copies, their issuer arrives expecting the bytes;
    // else every thread of the block or group, once its share of the rows
    // has landed), a "V full" one (V's tensor copy with `v_apart`, else
    // unused), and an "empty" one (the group's threads arrive when done
    // reading a tile that the stage will be refilled after); per group a
    // "done" one before the merge. Thread 0 initializes them; a block
    // barrier publishes them.
    let q_barrier = smem_base + plan.q_barrier();
    let (q_fillers, kv_fillers) = (Copies::fillers(threads), Copies::fillers(group_threads));
    // SAFETY: thread 0 alone initializes; nothing uses a barrier before the block barrier.
    unsafe {
        if thread == 0 {
            mbarrier::init(q_barrier, q_fillers);
            for g in 0..SPLITS as u32 {
                for stage in 0..STAGES as u32 {
                    mbarrier::init(smem_base + plan.full_barrier(g, stage), kv_fillers);
                    mbarrier::init(smem_base + plan.v_full_barrier(g, stage), 1);
                    mbarrier::init(smem_base + plan.empty_barrier(g, stage), group_threads);
                }
                mbarrier::init(smem_base + plan.done_barrier(g), group_threads);
            }
        }
        bar::sync_threads();
    }
    // Prologue: Q (the whole block), then the group's first STAGES key blocks.
    // SAFETY: the Q tile is free; Q rows below `job.rows` are inside Q (the
    // map zero-fills the rest); one arrival per thread and barrier phase.
    unsafe {
        Copies::load_q::<HEAD_DIM, Pairing>(
            smem_base + plan.q,
            tile_rows,
            &job,
            shape.block_m,
            maps,
            q_barrier,
            (thread, threads),
        );
        for i in 0..(STAGES as u32).min(my_blocks) {
            load_kv(i);
        }
        mbarrier::wait(q_barrier, 0);
    }
    // SAFETY: converged warp; the warp's 16 rows of the Q tile.
    let q_frag: warp_tile::QFragments<QK_STEPS> =
        unsafe { Qk::q_fragments(smem_base + plan.q, tile_rows, 16 * row_warp) };

    let mut rows = Rows::EMPTY;
    let mut o = [[0f32; 4]; O_TILES];
    let geometry =
        MaskGeometry { row: job.row0 + 16 * row_warp + group, col: 2 * quad, seq_q: p.seq_q, seq_kv: p.seq_kv, causal };
    // This thread's two rows of the block.
    let local_rows = [16 * row_warp + group, 16 * row_warp + group + 8];
    // SAFETY: the job of these parameters.
    let thread_rows = unsafe { W::thread_rows(p, &job, local_rows, 2 * quad) };
    // Each group walks its own key blocks: no block barrier in the loop.
    for i in 0..my_blocks {
        let at = Ring::<STAGES>::at(i);
        // Wait for K of block i. SAFETY: its copies arrive on this phase.
        unsafe { pipeline::wait(full(at.stage), at) };
        // S = Q·K^T. SAFETY: converged warp; the K tile of this stage.
        let mut s =
            unsafe { Qk::scores::<QK_STEPS, S_TILES>(&q_frag, smem_base + plan.q, k_tile(at.stage), tile_rows) };
        // Mask, softmax, rescale O (four chains: `Rows::step` spelled out,
        // the only form that measured faster, see lab/).
        let key0 = if rotated { rotated_start(i) } else { job.key_begin + (split + i * SPLITS as u32) * block_n };
        W::prepare_scores(&mut s, &thread_rows, key0);
        let masked = W::needs_mask(p, &job, key0, block_n);
        if SOFTMAX_CHAINS == 4 {
            let mask = masked.then_some((geometry, key0));
            // SAFETY: converged warp.
            let alpha = unsafe { rows.softmax::<Unfused, SOFTMAX_CHAINS, S_TILES>(&mut s, job.score_scale_log2, mask) };
            online::rescale(&mut o, alpha);
        } else {
            // SAFETY: converged warp.
            unsafe {
                rows.step::<Unfused, _, _>(&mut s, &mut o, job.score_scale_log2, masked.then_some((geometry, key0)))
            };
        }
        // O += P·V once V landed. SAFETY: with `v_apart` its copy arrives
        // on this phase of "V full"; converged warp; the V tile of this stage.
        unsafe {
            if v_apart {
                pipeline::wait(v_full(at.stage), at);
            }
            let v_at = v_tile(at.stage);
            let v_ptr = smem_ptr.add((v_at - smem_base) as usize);
            W::prepare_values::<HEAD_DIM>(v_ptr, tile_rows, key0, block_n, &thread_rows);
            pv_e4m3(&mut o, &s, v_at, tile_rows);
        }
        // Release the stage; refill it with block i + STAGES.
        if i + (STAGES as u32) < my_blocks {
            // SAFETY: uniform over the group.
            unsafe { pipeline::release(empty(at.stage), at, Copies::refills(team)) };
            load_kv(i + STAGES as u32);
        }
    }

    // The next kernel may launch now (after the key loop; see `grid_dep`).
    grid_dep::launch_dependents();
    // Merge (see `merge`): once the group's threads are all done with its
    // K/V tiles (unless its exchange slots lie apart from them), publish the
    // group's (max, sum) of the warp's rows and its partial output; after
    // one block barrier, finish and store this group's slice.
    let merge = MergeArea {
        stats: plan.stats,
        exchange: plan.exchange,
        group_stride: plan.exchange_stride,
        block_m: shape.block_m,
    };
    let done = smem_base + plan.done_barrier(split);
    // SAFETY: uniform over the group (one arrival per thread); then every
    // copy of the group has landed and no thread of it reads its tiles.
    // (With the exchange apart no thread needs that: the loop waited for
    // every copy, and the slots are no tile's.)
    unsafe {
        Ex::free_tiles(done);
        merge.publish_stats(smem_ptr, split, local_rows, &rows, quad);
        merge.publish_partials(smem_ptr, (split, row_warp, lane), &o);
        bar::sync_threads();
    }
    // SAFETY: stats and partials are published; SLICE * SPLITS == O_TILES (entry).
    let slice = unsafe {
        merge.finish_slice::<O_TILES, SPLITS, SLICE>(smem_ptr, (split, row_warp, lane), local_rows, job.v_scale)
    };
    // SAFETY: the merge's statistics are published; SLICE is even (entry).
    unsafe {
        W::store::<HEAD_DIM, SLICE, SPLITS, Out>(
            p,
            &job,
            &slice,
            split * SLICE as u32,
            local_rows,
            (&merge, smem_ptr),
            (split, quad),
        )
    };
}
