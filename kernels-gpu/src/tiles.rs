//! Tile shapes of the kernel variants, and the shared-memory plan that
//! follows from them. Host (launch, budgets, tests) and device use the same
//! numbers.

use crate::layout::RowLayout;
use crate::params::TILE_KEYS;

/// The tile shape of one kernel instance.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TileShape {
    /// Head dimension D (64 or 128).
    pub head_dim: u32,
    /// Query rows per block (BLOCK_M).
    pub block_m: u32,
    /// Keys per step of the key loop (BLOCK_N).
    pub block_n: u32,
    /// K/V shared-memory buffers (pipeline depth); 0 for kernels without one.
    pub stages: u32,
    /// Warps per block.
    pub warps: u32,
    /// Groups of warps that share out a query block's key blocks (key block
    /// `j` goes to group `j % splits`) and merge their partial results at
    /// the end; 1 for kernels whose warps all walk every key block.
    pub splits: u32,
}

impl TileShape {
    /// Threads per block.
    pub const fn threads(&self) -> u32 {
        self.warps * 32
    }
}

/// A kernel's shared-memory plan, by kind, with the choices that change it:
/// the one signature ([`SmemPlan::total`], const) by which the kernel table
/// sizes every kernel's launch. Each kind's byte offsets are its own type
/// ([`MmaSmemPlan`], [`SplitSmemPlan`], [`WgmmaSmemPlan`]), which its
/// kernel builds from the same shape; the `kv_tiles` prepass, sized by its
/// head dimension alone, has [`KvTilesSmemPlan`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SmemPlan {
    /// The `mma` kernel's.
    Mma,
    /// The `split` kernel's, sized with padded rows (the swizzled plan fits
    /// in it), the exchange slots apart from the K/V tiles or in them.
    Split {
        /// The exchange slots lie after every group's tiles.
        exchange_apart: bool,
    },
    /// The `wgmma` kernel's, with P·V in E4M3 or f16.
    Wgmma {
        /// `Vt` holds E4M3 keys and no rows of ones.
        pv_e4m3: bool,
    },
}

impl SmemPlan {
    /// Dynamic shared memory in bytes of a block of tile shape `t`.
    pub const fn total(self, t: TileShape) -> u32 {
        match self {
            SmemPlan::Mma => MmaSmemPlan::new(t).total,
            SmemPlan::Split { exchange_apart } => SplitSmemPlan::new(t, exchange_apart).total,
            SmemPlan::Wgmma { pv_e4m3 } => WgmmaSmemPlan::new(t, pv_e4m3).total,
        }
    }
}

/// Padding added to every shared-memory row so that the 8 rows an
/// `ldmatrix` reads fall in distinct banks (16 bytes: one `ldmatrix` row).
pub const SMEM_ROW_PAD: u32 = 16;

/// Byte offsets of the `mma` kernel's shared-memory buffers.
///
/// Q, K and V arrive as E4M3 rows of `head_dim + 16` bytes; V is converted
/// once per key block into an f16 buffer of rows of `2*head_dim + 16` bytes
/// for `ldmatrix.trans`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MmaSmemPlan {
    /// Bytes per E4M3 row (Q, K, V stages).
    pub fp8_row: u32,
    /// Bytes per f16 row (converted V).
    pub f16_row: u32,
    /// Offset of the Q tile (`block_m` rows).
    pub q: u32,
    /// Offset of the first K stage (`block_n` rows each, `stages` of them).
    pub k: u32,
    /// Offset of the first V stage (E4M3, `block_n` rows each, `stages` of them).
    pub v: u32,
    /// Offset of the converted f16 V tile (`block_n` rows).
    pub v_f16: u32,
    /// Total dynamic shared memory in bytes.
    pub total: u32,
}

impl MmaSmemPlan {
    /// The plan for a tile shape.
    pub const fn new(t: TileShape) -> Self {
        let fp8_row = t.head_dim + SMEM_ROW_PAD;
        let f16_row = 2 * t.head_dim + SMEM_ROW_PAD;
        let q = 0;
        let k = q + t.block_m * fp8_row;
        let v = k + t.stages * t.block_n * fp8_row;
        let v_f16 = v + t.stages * t.block_n * fp8_row;
        let total = v_f16 + t.block_n * f16_row;
        Self { fp8_row, f16_row, q, k, v, v_f16, total }
    }

    /// Offset of K stage `stage`.
    pub const fn k_stage(&self, stage: u32, block_n: u32) -> u32 {
        self.k + stage * block_n * self.fp8_row
    }

    /// Offset of V stage `stage` (E4M3).
    pub const fn v_stage(&self, stage: u32, block_n: u32) -> u32 {
        self.v + stage * block_n * self.fp8_row
    }
}

/// Byte offsets of the `split` kernel's shared-memory buffers.
///
/// Q, and for each of the `splits` warp groups `stages` K and V tiles, as
/// E4M3 rows of `head_dim + 16` bytes ([`SplitSmemPlan::new`]) or as
/// swizzled rows of `head_dim` bytes ([`SplitSmemPlan::new_swizzled`]). At the end the groups merge through
/// `stats` (each group's running maximum and row sum per query row) and
/// exchange slots for their f32 partial outputs (`4 * head_dim` bytes per
/// row): group `g`'s slots lie in group `g`'s own K/V tiles, free once
/// all of the group's warps are done with them, or, with the exchange
/// apart, after every group's tiles, so no group waits for that. The copies complete on `mbarrier`s
/// (`barriers`: Q's, then per group a "full" and an "empty" one per stage
/// and a "done" one).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SplitSmemPlan {
    /// Bytes per E4M3 row of the Q, K and V tiles (padding included).
    pub fp8_row: u32,
    /// How the rows of the Q, K and V tiles lie: padded (filled by
    /// `cp.async`), or swizzled (filled by tensor copies, sm_90a).
    pub rows: RowLayout,
    /// Offset of the Q tile (`block_m` rows).
    pub q: u32,
    /// Offset of the merge statistics: `(max, sum)` f32 pairs, indexed
    /// `[split][row]`.
    pub stats: u32,
    /// Offset of the barriers (8 bytes each; see [`SplitSmemPlan::full_barrier`]).
    pub barriers: u32,
    /// Offset of group 0's first K tile; each group owns `group_bytes`.
    pub kv: u32,
    /// Bytes per group: `stages` x (K tile, V tile) of `block_n` rows, or
    /// its exchange slots if they are larger and lie in the tiles.
    pub group_bytes: u32,
    /// Offset of group 0's exchange slots: `kv`, or past every group's
    /// tiles with the exchange apart.
    pub exchange: u32,
    /// Bytes from one group's exchange slots to the next.
    pub exchange_stride: u32,
    /// Total dynamic shared memory in bytes.
    pub total: u32,
    /// K/V stages per group (the barriers are laid out by it).
    stages: u32,
}

impl SplitSmemPlan {
    /// The plan for a tile shape with padded rows (`cp.async`; this is the
    /// plan the host sizes the launch by: the swizzled one fits in it), the
    /// exchange slots apart from the K/V tiles if `exchange_apart`.
    pub const fn new(t: TileShape, exchange_apart: bool) -> Self {
        let fp8_row = t.head_dim + SMEM_ROW_PAD;
        Self::with_rows(t, RowLayout::Padded { stride: fp8_row }, fp8_row, 16, exchange_apart)
    }

    /// The plan with swizzled rows (tensor copies, sm_90a): unpadded rows,
    /// the Q tile and every K and V tile at a multiple of 1024 bytes; the
    /// exchange slots as in [`SplitSmemPlan::new`].
    pub const fn new_swizzled(t: TileShape, exchange_apart: bool) -> Self {
        Self::with_rows(t, RowLayout::Swizzled { row_bytes: t.head_dim }, t.head_dim, 1024, exchange_apart)
    }

    /// The plan for rows `rows` of `fp8_row` bytes, the K/V area and every
    /// group's part of it aligned to `align` bytes.
    const fn with_rows(t: TileShape, rows: RowLayout, fp8_row: u32, align: u32, exchange_apart: bool) -> Self {
        let q = 0;
        let stats = q + t.block_m * fp8_row;
        let barriers = stats + t.splits * t.block_m * 8;
        let barrier_bytes = 8 * (1 + t.splits * (3 * t.stages + 1));
        let kv = (barriers + barrier_bytes).next_multiple_of(align);
        let tiles = t.stages * 2 * t.block_n * fp8_row;
        // A group's exchange slots: `block_m` rows of `4 * head_dim` bytes.
        let slots = t.block_m * 4 * t.head_dim;
        let (group_bytes, exchange, exchange_stride) = if exchange_apart {
            let group_bytes = tiles.next_multiple_of(align);
            (group_bytes, kv + t.splits * group_bytes, slots)
        } else {
            let group_bytes = (if tiles > slots { tiles } else { slots }).next_multiple_of(align);
            (group_bytes, kv, group_bytes)
        };
        let total = exchange + t.splits * exchange_stride;
        Self { fp8_row, rows, q, stats, barriers, kv, group_bytes, exchange, exchange_stride, total, stages: t.stages }
    }

    /// Offset of the barrier on which the Q tile's copies complete.
    pub const fn q_barrier(&self) -> u32 {
        self.barriers
    }

    /// Offset of group `split`'s barriers: `stages` "full", `stages` "V
    /// full", `stages` "empty", one "done".
    const fn group_barriers(&self, split: u32) -> u32 {
        self.barriers + 8 * (1 + split * (3 * self.stages + 1))
    }

    /// Offset of the barrier on which group `split`'s copies into stage
    /// `stage` complete ("full": K's tensor copy, or every thread's copies
    /// of K and V).
    pub const fn full_barrier(&self, split: u32, stage: u32) -> u32 {
        self.group_barriers(split) + 8 * stage
    }

    /// Offset of the barrier on which group `split`'s tensor copy of V into
    /// stage `stage` completes ("V full"; unused with per-thread copies).
    pub const fn v_full_barrier(&self, split: u32, stage: u32) -> u32 {
        self.group_barriers(split) + 8 * (self.stages + stage)
    }

    /// Offset of the barrier on which group `split`'s threads release stage
    /// `stage` for refilling ("empty").
    pub const fn empty_barrier(&self, split: u32, stage: u32) -> u32 {
        self.group_barriers(split) + 8 * (2 * self.stages + stage)
    }

    /// Offset of the barrier on which group `split`'s threads meet once done
    /// with their K/V tiles, before the exchange slots overwrite them ("done").
    pub const fn done_barrier(&self, split: u32) -> u32 {
        self.group_barriers(split) + 8 * 3 * self.stages
    }

    /// Offset of group `split`'s K tile in stage `stage`.
    pub const fn k_stage(&self, split: u32, stage: u32, block_n: u32) -> u32 {
        self.kv + split * self.group_bytes + 2 * stage * block_n * self.fp8_row
    }

    /// Offset of group `split`'s V tile in stage `stage` (E4M3).
    pub const fn v_stage(&self, split: u32, stage: u32, block_n: u32) -> u32 {
        self.k_stage(split, stage, block_n) + block_n * self.fp8_row
    }
}

/// Rows of ones after each `Vt` stage of the `wgmma` kernel: one 8-row
/// group of `P·V`'s N, whose 8 accumulator columns each get the row sums of P.
pub const ONES_ROWS: u32 = 8;

/// Byte offsets of the `wgmma` kernel's shared-memory buffers (the tiles
/// at multiples of 128: `wgmma` core matrices and bulk copies need 16-byte
/// alignment).
///
/// Every tile is in the no-swizzle K-major core-matrix layout
/// (`layout::RowLayout::CoreMatrices`) that `wgmma` reads through
/// descriptors: Q and K as E4M3 rows of `head_dim` bytes, and `Vt` (V
/// transposed to f16 by the prepass) as `head_dim` rows of `block_n` keys.
/// After the tiles, the `mbarrier`s of the K/Vt ring: per stage a "full"
/// one (the stage's bulk copies complete on it) and an "empty" one (every
/// warp arrives on it once its products no longer read the stage).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WgmmaSmemPlan {
    /// Offset of the Q tile (`block_m x head_dim` bytes).
    pub q: u32,
    /// Offset of the first K stage (`block_n x head_dim` bytes each).
    pub k: u32,
    /// Offset of the first `Vt` stage: `head_dim x block_n` keys of
    /// `vt_key_bytes` each, then (f16 only) [`ONES_ROWS`] rows of ones
    /// (written once by the kernel), so that the `P·V` product also sums
    /// P's rows.
    pub vt: u32,
    /// Bytes per `Vt` key: 2 (f16) or 1 (E4M3; `crate::params::vt_key_bytes`).
    pub vt_key_bytes: u32,
    /// Rows of ones after each `Vt` tile: [`ONES_ROWS`] (f16), or none
    /// (E4M3: the FP8 `wgmma` accumulates too coarsely for sums of every
    /// key, see lab/, so the softmax adds them in f32).
    pub sum_rows: u32,
    /// Offset of the barriers: `stages` "full", then `stages` "empty".
    pub barriers: u32,
    /// Total dynamic shared memory in bytes.
    pub total: u32,
}

impl WgmmaSmemPlan {
    /// The plan for a tile shape, with P·V in E4M3 (`pv_e4m3`) or f16.
    pub const fn new(t: TileShape, pv_e4m3: bool) -> Self {
        let vt_key_bytes = crate::params::vt_key_bytes(pv_e4m3);
        let sum_rows = if pv_e4m3 { 0 } else { ONES_ROWS };
        let q = 0;
        let k = q + t.block_m * t.head_dim;
        let vt = k + t.stages * t.block_n * t.head_dim;
        let barriers = vt + t.stages * Self::stage_bytes(t, sum_rows, vt_key_bytes);
        let total = barriers + 2 * 8 * t.stages;
        Self { q, k, vt, vt_key_bytes, sum_rows, barriers, total }
    }

    /// Bytes of one `Vt` stage: the tile's `head_dim` rows of `block_n`
    /// keys, then the `sum_rows` rows of ones.
    pub const fn vt_stage_bytes(&self, t: TileShape) -> u32 {
        Self::stage_bytes(t, self.sum_rows, self.vt_key_bytes)
    }

    /// [`WgmmaSmemPlan::vt_stage_bytes`] before the plan exists.
    const fn stage_bytes(t: TileShape, sum_rows: u32, vt_key_bytes: u32) -> u32 {
        (t.head_dim + sum_rows) * t.block_n * vt_key_bytes
    }

    /// Offset of stage `stage`'s rows of ones (after its `Vt` tile; f16 only).
    pub const fn ones_rows(&self, stage: u32, t: TileShape) -> u32 {
        self.vt_stage(stage, t) + t.head_dim * t.block_n * self.vt_key_bytes
    }

    /// Offset of K stage `stage`.
    pub const fn k_stage(&self, stage: u32, t: TileShape) -> u32 {
        self.k + stage * t.block_n * t.head_dim
    }

    /// Offset of `Vt` stage `stage`.
    pub const fn vt_stage(&self, stage: u32, t: TileShape) -> u32 {
        self.vt + stage * self.vt_stage_bytes(t)
    }

    /// Offset of the barrier on which stage `stage`'s copies complete ("full").
    pub const fn full_barrier(&self, stage: u32) -> u32 {
        self.barriers + 8 * stage
    }

    /// Offset of the barrier on which the warps release stage `stage` for
    /// refilling ("empty").
    pub const fn empty_barrier(&self, stage: u32, t: TileShape) -> u32 {
        self.barriers + 8 * (t.stages + stage)
    }
}

/// Byte offsets of the `kv_tiles` prepass's shared memory for one
/// [`TILE_KEYS`]-key tile (`crate::params::KvTiles`): the `Vt` image,
/// written once every thread has read the rows (f16: twice the rows'
/// bytes, so it runs over them; E4M3: as many, before them); the tile's V
/// rows as they come from global memory (E4M3, `head_dim` bytes per key);
/// and the barrier on which the input copies complete.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KvTilesSmemPlan {
    /// Offset of the `Vt` image.
    pub image: u32,
    /// Offset of the input V rows ([`TILE_KEYS`] of them).
    pub v_rows: u32,
    /// Offset of the input barrier.
    pub barrier: u32,
    /// Total dynamic shared memory in bytes.
    pub total: u32,
}

impl KvTilesSmemPlan {
    /// The plan at head dimension `head_dim` ([`TILE_KEYS`]-key tiles).
    pub const fn new(head_dim: u32) -> Self {
        let rows_bytes = TILE_KEYS * head_dim;
        let image = 0;
        let v_rows = image + rows_bytes;
        let barrier = v_rows + rows_bytes;
        Self { image, v_rows, barrier, total: barrier + 8 }
    }
}
