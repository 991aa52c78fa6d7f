//! The table of compiled kernels: every variant x head dimension, with its
//! stable name, PTX entry symbol, tile shape and shared memory. The host
//! launches from it, xtask gates it, the tests take tile edges from it.

use crate::params::kv_tiles_threads;
use crate::tiles::{KvTilesSmemPlan, SmemPlan, TileShape};
use crate::variant::{OutputDtype, Variant};

/// One compiled kernel: a variant at one head dimension, writing one
/// output type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KernelInfo {
    /// The variant it implements.
    pub variant: Variant,
    /// The element type it writes O in.
    pub output: OutputDtype,
    /// The PTX entry symbol.
    pub entry: &'static str,
    /// Its tile shape (its `head_dim` is the head dimension it serves).
    pub tiles: TileShape,
    /// Dynamic shared memory per block, in bytes.
    pub smem_bytes: u32,
    /// Built only for sm_90a (uses Hopper-only instructions).
    pub sm90a_only: bool,
    /// A kernel launched before this one on the same problem, if any.
    pub prepass: Option<Prepass>,
    /// Blocks per SM that ptxas must make room for, or 0 to leave its
    /// register allocation free. Nonzero, the builder declares the entry's
    /// launch bounds in its PTX (`.maxntid` of the block's threads and
    /// `.minnctapersm` this), which caps its registers at
    /// `65536 / (threads x this)`: rustc has no attribute for them.
    pub min_blocks_per_sm: u32,
    /// What its warps do: all the same work, or a producer warpgroup beside
    /// the tile shape's warps ([`KernelInfo::threads`]).
    pub roles: Roles,
    /// Whether its tensor copies bring Q, K and V as 128-byte rows of two
    /// rows each (`layout::RowLayout::SwizzledPairs`; the host encodes
    /// their maps so): half the copy requests, each a whole 128-byte line.
    /// Such a kernel runs only on even query and key lengths
    /// ([`KernelInfo::runs_on`]).
    pub pair_rows: bool,
    /// A kernel launched after this one on the same problem to merge its
    /// blocks' partial results, where the host splits the keys across
    /// blocks (`decode`).
    pub merge: Option<MergePass>,
    /// Its twin over packed batches of sequences of their own lengths
    /// (`params::AttnParams::cu_seqlens_q`), if one is built: the same
    /// tiles, shared memory and prepass.
    pub packed: Option<PackedTwin>,
    /// Its twins with a key window, and with a window and capped scores
    /// (`params::AttnParams::window_left`, `softcap`), if built.
    pub scores: Option<ScoreTwins>,
}

/// What the warps of a kernel's block do ([`KernelInfo::roles`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Roles {
    /// The tile shape's warps, each computing rows and some of them
    /// issuing the block's copies between their own work.
    Uniform,
    /// The tile shape's warps compute rows and one more warpgroup issues
    /// every copy (`attention::wgmma::specialized`, which shares the
    /// register file out by `setmaxnreg`), in the kernel and all its twins.
    ProducerWarpgroup,
}

/// Which scores a kernel entry computes: a launch's choice among a
/// kernel's entries ([`KernelInfo::entry_for`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ScoreForm {
    /// Every key, or causal masking; scores as they are.
    #[default]
    Plain,
    /// A key window (`window::KeyWindow`, causal masking folded in).
    Window,
    /// A key window and capped scores (`params::AttnParams::softcap`).
    Softcap,
}

/// A kernel's twins over its scores ([`KernelInfo::scores`]): the same
/// tiles, shared memory, prepass and merge as the kernel, over `[B, H, S,
/// D]` tensors and over packed batches (where the kernel has a packed
/// twin); `None` where one is not built.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScoreTwins {
    /// With a key window.
    pub window: PackedTwin,
    /// With a key window and capped scores.
    pub softcap: Option<PackedTwin>,
    /// With a key window, over packed batches.
    pub packed_window: Option<PackedTwin>,
    /// With a key window and capped scores, over packed batches.
    pub packed_softcap: Option<PackedTwin>,
}

/// The score twins of a `wgmma` kernel: `names` the f16 and bf16 entries
/// with a window, with a softcap, and the same over packed batches;
/// `min_blocks_per_sm` the launch bounds of the dense and the packed ones.
const fn score_twins(names: [[&'static str; 2]; 4], min_blocks_per_sm: [u32; 2]) -> Option<ScoreTwins> {
    const fn twin([entry_f16, entry_bf16]: [&'static str; 2], min_blocks_per_sm: u32) -> PackedTwin {
        PackedTwin { entry_f16, entry_bf16, min_blocks_per_sm }
    }
    Some(ScoreTwins {
        window: twin(names[0], min_blocks_per_sm[0]),
        softcap: Some(twin(names[1], min_blocks_per_sm[0])),
        packed_window: Some(twin(names[2], min_blocks_per_sm[1])),
        packed_softcap: Some(twin(names[3], min_blocks_per_sm[1])),
    })
}

/// The score twins of a `decode`, `split`, `split-n64` or `mma` kernel: `window`'s and
/// `softcap`'s entries (f16, bf16), none over packed batches.
const fn dense_twins(window: [&'static str; 2], softcap: [&'static str; 2]) -> Option<ScoreTwins> {
    let window = PackedTwin { entry_f16: window[0], entry_bf16: window[1], min_blocks_per_sm: 0 };
    let softcap = PackedTwin { entry_f16: softcap[0], entry_bf16: softcap[1], min_blocks_per_sm: 0 };
    Some(ScoreTwins { window, softcap: Some(softcap), packed_window: None, packed_softcap: None })
}

/// The entries of a kernel's twin over packed batches
/// ([`KernelInfo::packed`]) or over its scores ([`ScoreTwins`]), one per
/// output type, and the launch bounds it asks for (as
/// [`KernelInfo::min_blocks_per_sm`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PackedTwin {
    /// The PTX entry symbol of the twin writing f16.
    pub entry_f16: &'static str,
    /// The PTX entry symbol of the twin writing bf16.
    pub entry_bf16: &'static str,
    /// Blocks per SM ptxas must make room for, or 0.
    pub min_blocks_per_sm: u32,
}

impl PackedTwin {
    /// The entry that writes `output`.
    pub const fn entry(&self, output: OutputDtype) -> &'static str {
        match output {
            OutputDtype::F16 => self.entry_f16,
            OutputDtype::Bf16 => self.entry_bf16,
        }
    }

    /// A twin with these entries and launch bounds.
    const fn of(entry_f16: &'static str, entry_bf16: &'static str, min_blocks_per_sm: u32) -> Option<PackedTwin> {
        Some(PackedTwin { entry_f16, entry_bf16, min_blocks_per_sm })
    }
}

/// A merge kernel: grid `(rows, heads)` as its kernel's documentation
/// says, `threads` threads, `smem_bytes` of dynamic shared memory; one
/// entry per output type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MergePass {
    /// The PTX entry symbol of the twin writing f16.
    pub entry_f16: &'static str,
    /// The PTX entry symbol of the twin writing bf16.
    pub entry_bf16: &'static str,
    /// Threads per block.
    pub threads: u32,
    /// Dynamic shared memory per block, in bytes.
    pub smem_bytes: u32,
}

impl MergePass {
    /// The entry that writes `output`.
    pub const fn entry(&self, output: OutputDtype) -> &'static str {
        match output {
            OutputDtype::F16 => self.entry_f16,
            OutputDtype::Bf16 => self.entry_bf16,
        }
    }
}

/// A prepass kernel: grid `(padded_keys(seq_kv) / 64, heads_kv, batch)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Prepass {
    /// The PTX entry symbol.
    pub entry: &'static str,
    /// Threads per block.
    pub threads: u32,
    /// Dynamic shared memory per block in bytes.
    pub smem_bytes: u32,
}

impl Prepass {
    /// The `kv_tiles` prepass `entry` at `head_dim`: its threads and shared
    /// memory follow from the head dimension.
    pub const fn kv_tiles(entry: &'static str, head_dim: u32) -> Prepass {
        Prepass { entry, threads: kv_tiles_threads(head_dim), smem_bytes: KvTilesSmemPlan::new(head_dim).total }
    }
}

/// `mma` at D = 64: 4 warps x 16 rows, 64-key blocks, double-buffered K/V.
pub const MMA_D64: TileShape = TileShape { head_dim: 64, block_m: 64, block_n: 64, stages: 2, warps: 4, splits: 1 };
/// `mma` at D = 128: 32-key blocks, so the block fits 48 KB of shared
/// memory and two blocks fit an L4 (sm_89) multiprocessor.
pub const MMA_D128: TileShape = TileShape { head_dim: 128, block_n: 32, ..MMA_D64 };

/// `wgmma` at D = 64: 2 warpgroups x 64 rows, 64-key blocks, K/Vt 4 deep
/// (the pipelined loop holds block j's Vt and block j + 1's K while blocks
/// j + 2 and j + 3 load).
pub const WGMMA_D64: TileShape = TileShape { head_dim: 64, block_m: 128, block_n: 64, stages: 4, warps: 8, splits: 1 };
/// `wgmma` at D = 128: 3 warpgroups (192 rows) share each K/Vt tile, and
/// its kernels add a producer warpgroup ([`Roles::ProducerWarpgroup`]).
pub const WGMMA_D128: TileShape = TileShape { head_dim: 128, block_m: 192, warps: 12, ..WGMMA_D64 };
/// `wgmma-fp8pv` at D = 128 on long rows (the host's kernel selection
/// takes it past a key length): 2 warpgroups (128 rows) share each K/Vt
/// stage of 192 keys (three prepass tiles; a head's first key block takes
/// the tiles that leave every later one whole), 213 KB; a producer
/// warpgroup issues every copy ([`Roles::ProducerWarpgroup`]).
pub const WGMMA_FP8PV_LONG_D128: TileShape =
    TileShape { head_dim: 128, block_m: 128, block_n: 192, stages: 4, warps: 8, splits: 1 };

/// `split` at D = 64: 2 row warps (32 query rows) x 4 key groups, 32-key
/// blocks, K/V double-buffered per group: 256 keys in flight per block, and
/// 44.7 KB of shared memory so two blocks fit an L4 multiprocessor.
pub const SPLIT_D64: TileShape = TileShape { head_dim: 64, block_m: 32, block_n: 32, stages: 2, warps: 8, splits: 4 };
/// `split` at D = 128: 2 key groups (the same shared memory budget).
pub const SPLIT_D128: TileShape = TileShape { head_dim: 128, warps: 4, splits: 2, ..SPLIT_D64 };
/// `split-wg` at D = 64: 4 row warps (64 query rows, one warpgroup) x 2 key
/// groups, 64-key blocks (the N of its `wgmma`), K/V double-buffered per
/// group.
pub const SPLIT_WG_D64: TileShape =
    TileShape { head_dim: 64, block_m: 64, block_n: 64, stages: 2, warps: 8, splits: 2 };
/// `split-wg` at D = 128: the same blocks.
pub const SPLIT_WG_D128: TileShape = TileShape { head_dim: 128, ..SPLIT_WG_D64 };

/// `split-n64` at D = 64: `split`'s blocks with 64-key blocks (4 groups of
/// 2 row warps): 512 keys in flight per block, 85.7 KB of tiles (118.5 KB
/// with the exchange apart, below), one block per SM.
pub const SPLIT_N64_D64: TileShape = TileShape { block_n: 64, ..SPLIT_D64 };
/// Whether `split-n64` at D = 64 keeps its merge's exchange slots apart
/// from the K/V tiles (`SplitSmemPlan::new`: +32 KB, 118.5 KB per block,
/// still one per SM), so its key groups need not meet before they publish
/// (measured 0.5-2% faster, see lab/).
pub const SPLIT_N64_D64_EXCHANGE_APART: bool = true;
/// `split-n64` at D = 128: `split`'s 2 groups of 2 row warps with 64-key
/// blocks (0.76-0.93x `split`'s time at 256+ keys on the H100).
pub const SPLIT_N64_D128: TileShape = TileShape { block_n: 64, ..SPLIT_D128 };

/// `decode` at D = 64: one row warp (16 folded query rows) x 4 key groups
/// of 32-key blocks, K/V double-buffered per group: 256 keys in flight in
/// 42 KB, so that two blocks fit an L4 multiprocessor and five an H100's.
pub const DECODE_D64: TileShape = TileShape { head_dim: 64, block_m: 16, block_n: 32, stages: 2, warps: 4, splits: 4 };
/// `decode` at D = 128: 2 key groups (the same shared memory budget).
pub const DECODE_D128: TileShape = TileShape { head_dim: 128, warps: 2, splits: 2, ..DECODE_D64 };

/// Threads of a `decode` merge block (`attention::decode::merge_splits`):
/// four warps share one row's splits.
pub const DECODE_MERGE_THREADS: u32 = 128;

/// Dynamic shared memory of a `decode` merge block at head dimension
/// `head_dim`: per warp its maximum, its weights' sum and its lanes'
/// weighted columns (f32).
pub const fn decode_merge_smem_bytes(head_dim: u32) -> u32 {
    DECODE_MERGE_THREADS / 32 * (2 + head_dim) * 4
}

/// `decode`'s merge kernels at head dimension `head_dim`.
const fn decode_merge(entry_f16: &'static str, entry_bf16: &'static str, head_dim: u32) -> Option<MergePass> {
    let smem_bytes = decode_merge_smem_bytes(head_dim);
    Some(MergePass { entry_f16, entry_bf16, threads: DECODE_MERGE_THREADS, smem_bytes })
}

/// The f16 kernels, in a fixed order.
const F16_KERNELS: [KernelInfo; 16] = [
    KernelInfo {
        variant: Variant::Mma,
        output: OutputDtype::F16,
        entry: "sdpa_mma_d64",
        tiles: MMA_D64,
        smem_bytes: SmemPlan::Mma.total(MMA_D64),
        sm90a_only: false,
        prepass: None,
        min_blocks_per_sm: 0,
        roles: Roles::Uniform,
        pair_rows: false,
        merge: None,
        packed: None,
        scores: dense_twins(
            ["sdpa_mma_window_d64", "sdpa_mma_window_d64_bf16"],
            ["sdpa_mma_softcap_d64", "sdpa_mma_softcap_d64_bf16"],
        ),
    },
    KernelInfo {
        variant: Variant::Mma,
        output: OutputDtype::F16,
        entry: "sdpa_mma_d128",
        tiles: MMA_D128,
        smem_bytes: SmemPlan::Mma.total(MMA_D128),
        sm90a_only: false,
        prepass: None,
        min_blocks_per_sm: 0,
        roles: Roles::Uniform,
        pair_rows: false,
        merge: None,
        packed: None,
        scores: dense_twins(
            ["sdpa_mma_window_d128", "sdpa_mma_window_d128_bf16"],
            ["sdpa_mma_softcap_d128", "sdpa_mma_softcap_d128_bf16"],
        ),
    },
    KernelInfo {
        variant: Variant::Wgmma,
        output: OutputDtype::F16,
        entry: "sdpa_wgmma_d64",
        tiles: WGMMA_D64,
        smem_bytes: SmemPlan::Wgmma { pv_e4m3: false }.total(WGMMA_D64),
        sm90a_only: true,
        prepass: Some(Prepass::kv_tiles("sdpa_kv_tiles_d64", 64)),
        min_blocks_per_sm: 2,
        roles: Roles::Uniform,
        pair_rows: false,
        merge: None,
        packed: PackedTwin::of("sdpa_wgmma_packed_d64", "sdpa_wgmma_packed_d64_bf16", 2),
        scores: score_twins(
            [
                ["sdpa_wgmma_window_d64", "sdpa_wgmma_window_d64_bf16"],
                ["sdpa_wgmma_softcap_d64", "sdpa_wgmma_softcap_d64_bf16"],
                ["sdpa_wgmma_packed_window_d64", "sdpa_wgmma_packed_window_d64_bf16"],
                ["sdpa_wgmma_packed_softcap_d64", "sdpa_wgmma_packed_softcap_d64_bf16"],
            ],
            // (Packed, two blocks' 128 registers spill.)
            [2, 0],
        ),
    },
    KernelInfo {
        variant: Variant::Wgmma,
        output: OutputDtype::F16,
        entry: "sdpa_wgmma_d128",
        tiles: WGMMA_D128,
        smem_bytes: SmemPlan::Wgmma { pv_e4m3: false }.total(WGMMA_D128),
        sm90a_only: true,
        prepass: Some(Prepass::kv_tiles("sdpa_kv_tiles_d128", 128)),
        min_blocks_per_sm: 1,
        roles: Roles::ProducerWarpgroup,
        pair_rows: false,
        merge: None,
        packed: PackedTwin::of("sdpa_wgmma_packed_d128", "sdpa_wgmma_packed_d128_bf16", 1),
        scores: score_twins(
            [
                ["sdpa_wgmma_window_d128", "sdpa_wgmma_window_d128_bf16"],
                ["sdpa_wgmma_softcap_d128", "sdpa_wgmma_softcap_d128_bf16"],
                ["sdpa_wgmma_packed_window_d128", "sdpa_wgmma_packed_window_d128_bf16"],
                ["sdpa_wgmma_packed_softcap_d128", "sdpa_wgmma_packed_softcap_d128_bf16"],
            ],
            [1, 1],
        ),
    },
    KernelInfo {
        variant: Variant::Split,
        output: OutputDtype::F16,
        entry: "sdpa_split_d64",
        tiles: SPLIT_D64,
        smem_bytes: SmemPlan::Split { exchange_apart: false }.total(SPLIT_D64),
        sm90a_only: false,
        prepass: None,
        min_blocks_per_sm: 0,
        roles: Roles::Uniform,
        pair_rows: false,
        merge: None,
        packed: None,
        scores: dense_twins(
            ["sdpa_split_window_d64", "sdpa_split_window_d64_bf16"],
            ["sdpa_split_softcap_d64", "sdpa_split_softcap_d64_bf16"],
        ),
    },
    KernelInfo {
        variant: Variant::Split,
        output: OutputDtype::F16,
        entry: "sdpa_split_d128",
        tiles: SPLIT_D128,
        smem_bytes: SmemPlan::Split { exchange_apart: false }.total(SPLIT_D128),
        sm90a_only: false,
        prepass: None,
        min_blocks_per_sm: 0,
        roles: Roles::Uniform,
        pair_rows: false,
        merge: None,
        packed: None,
        scores: dense_twins(
            ["sdpa_split_window_d128", "sdpa_split_window_d128_bf16"],
            ["sdpa_split_softcap_d128", "sdpa_split_softcap_d128_bf16"],
        ),
    },
    KernelInfo {
        variant: Variant::SplitWg,
        output: OutputDtype::F16,
        entry: "sdpa_split_wg_d64",
        tiles: SPLIT_WG_D64,
        smem_bytes: SmemPlan::Split { exchange_apart: false }.total(SPLIT_WG_D64),
        sm90a_only: true,
        prepass: None,
        // Two blocks per SM (128 registers): 14-24% faster at every shape
        // of more than 132 blocks on the H100.
        min_blocks_per_sm: 2,
        roles: Roles::Uniform,
        pair_rows: false,
        merge: None,
        packed: None,
        scores: None,
    },
    KernelInfo {
        variant: Variant::SplitWg,
        output: OutputDtype::F16,
        entry: "sdpa_split_wg_d128",
        tiles: SPLIT_WG_D128,
        smem_bytes: SmemPlan::Split { exchange_apart: false }.total(SPLIT_WG_D128),
        sm90a_only: true,
        prepass: None,
        min_blocks_per_sm: 0,
        roles: Roles::Uniform,
        pair_rows: false,
        merge: None,
        packed: None,
        scores: None,
    },
    KernelInfo {
        variant: Variant::SplitN64,
        output: OutputDtype::F16,
        entry: "sdpa_split_n64_d64",
        tiles: SPLIT_N64_D64,
        smem_bytes: SmemPlan::Split { exchange_apart: SPLIT_N64_D64_EXCHANGE_APART }.total(SPLIT_N64_D64),
        sm90a_only: true,
        prepass: None,
        min_blocks_per_sm: 0,
        roles: Roles::Uniform,
        pair_rows: false,
        merge: None,
        packed: None,
        scores: dense_twins(
            ["sdpa_split_n64_window_d64", "sdpa_split_n64_window_d64_bf16"],
            ["sdpa_split_n64_softcap_d64", "sdpa_split_n64_softcap_d64_bf16"],
        ),
    },
    KernelInfo {
        variant: Variant::SplitN64,
        output: OutputDtype::F16,
        entry: "sdpa_split_n64_d128",
        tiles: SPLIT_N64_D128,
        smem_bytes: SmemPlan::Split { exchange_apart: false }.total(SPLIT_N64_D128),
        sm90a_only: true,
        prepass: None,
        min_blocks_per_sm: 0,
        roles: Roles::Uniform,
        pair_rows: false,
        merge: None,
        packed: None,
        scores: dense_twins(
            ["sdpa_split_n64_window_d128", "sdpa_split_n64_window_d128_bf16"],
            ["sdpa_split_n64_softcap_d128", "sdpa_split_n64_softcap_d128_bf16"],
        ),
    },
    KernelInfo {
        variant: Variant::WgmmaFp8Pv,
        output: OutputDtype::F16,
        entry: "sdpa_wgmma_fp8pv_d64",
        tiles: WGMMA_D64,
        smem_bytes: SmemPlan::Wgmma { pv_e4m3: true }.total(WGMMA_D64),
        sm90a_only: true,
        prepass: Some(Prepass::kv_tiles("sdpa_kv_tiles_fp8pv_d64", 64)),
        min_blocks_per_sm: 0,
        roles: Roles::Uniform,
        pair_rows: false,
        merge: None,
        packed: PackedTwin::of("sdpa_wgmma_fp8pv_packed_d64", "sdpa_wgmma_fp8pv_packed_d64_bf16", 2),
        scores: score_twins(
            [
                ["sdpa_wgmma_fp8pv_window_d64", "sdpa_wgmma_fp8pv_window_d64_bf16"],
                ["sdpa_wgmma_fp8pv_softcap_d64", "sdpa_wgmma_fp8pv_softcap_d64_bf16"],
                ["sdpa_wgmma_fp8pv_packed_window_d64", "sdpa_wgmma_fp8pv_packed_window_d64_bf16"],
                ["sdpa_wgmma_fp8pv_packed_softcap_d64", "sdpa_wgmma_fp8pv_packed_softcap_d64_bf16"],
            ],
            [0, 2],
        ),
    },
    KernelInfo {
        variant: Variant::WgmmaFp8Pv,
        output: OutputDtype::F16,
        entry: "sdpa_wgmma_fp8pv_d128",
        tiles: WGMMA_D128,
        smem_bytes: SmemPlan::Wgmma { pv_e4m3: true }.total(WGMMA_D128),
        sm90a_only: true,
        prepass: Some(Prepass::kv_tiles("sdpa_kv_tiles_fp8pv_d128", 128)),
        min_blocks_per_sm: 1,
        roles: Roles::ProducerWarpgroup,
        pair_rows: false,
        merge: None,
        packed: PackedTwin::of("sdpa_wgmma_fp8pv_packed_d128", "sdpa_wgmma_fp8pv_packed_d128_bf16", 1),
        scores: score_twins(
            [
                ["sdpa_wgmma_fp8pv_window_d128", "sdpa_wgmma_fp8pv_window_d128_bf16"],
                ["sdpa_wgmma_fp8pv_softcap_d128", "sdpa_wgmma_fp8pv_softcap_d128_bf16"],
                ["sdpa_wgmma_fp8pv_packed_window_d128", "sdpa_wgmma_fp8pv_packed_window_d128_bf16"],
                ["sdpa_wgmma_fp8pv_packed_softcap_d128", "sdpa_wgmma_fp8pv_packed_softcap_d128_bf16"],
            ],
            [1, 1],
        ),
    },
    KernelInfo {
        variant: Variant::WgmmaFp8Pv,
        output: OutputDtype::F16,
        entry: "sdpa_wgmma_fp8pv_long_d128",
        tiles: WGMMA_FP8PV_LONG_D128,
        smem_bytes: SmemPlan::Wgmma { pv_e4m3: true }.total(WGMMA_FP8PV_LONG_D128),
        sm90a_only: true,
        prepass: Some(Prepass::kv_tiles("sdpa_kv_tiles_fp8pv_d128", 128)),
        min_blocks_per_sm: 1,
        roles: Roles::ProducerWarpgroup,
        pair_rows: false,
        merge: None,
        packed: None,
        scores: None,
    },
    KernelInfo {
        variant: Variant::SplitN64,
        output: OutputDtype::F16,
        entry: "sdpa_split_n64_pairs_d64",
        tiles: SPLIT_N64_D64,
        smem_bytes: SmemPlan::Split { exchange_apart: SPLIT_N64_D64_EXCHANGE_APART }.total(SPLIT_N64_D64),
        sm90a_only: true,
        prepass: None,
        min_blocks_per_sm: 0,
        roles: Roles::Uniform,
        pair_rows: true,
        merge: None,
        packed: None,
        scores: None,
    },
    KernelInfo {
        variant: Variant::Decode,
        output: OutputDtype::F16,
        entry: "sdpa_decode_d64",
        tiles: DECODE_D64,
        smem_bytes: SmemPlan::Split { exchange_apart: false }.total(DECODE_D64),
        sm90a_only: false,
        prepass: None,
        min_blocks_per_sm: 0,
        roles: Roles::Uniform,
        pair_rows: false,
        merge: decode_merge("sdpa_decode_merge_d64", "sdpa_decode_merge_d64_bf16", 64),
        packed: None,
        scores: dense_twins(
            ["sdpa_decode_window_d64", "sdpa_decode_window_d64_bf16"],
            ["sdpa_decode_softcap_d64", "sdpa_decode_softcap_d64_bf16"],
        ),
    },
    KernelInfo {
        variant: Variant::Decode,
        output: OutputDtype::F16,
        entry: "sdpa_decode_d128",
        tiles: DECODE_D128,
        smem_bytes: SmemPlan::Split { exchange_apart: false }.total(DECODE_D128),
        sm90a_only: false,
        prepass: None,
        min_blocks_per_sm: 0,
        roles: Roles::Uniform,
        pair_rows: false,
        merge: decode_merge("sdpa_decode_merge_d128", "sdpa_decode_merge_d128_bf16", 128),
        packed: None,
        scores: dense_twins(
            ["sdpa_decode_window_d128", "sdpa_decode_window_d128_bf16"],
            ["sdpa_decode_softcap_d128", "sdpa_decode_softcap_d128_bf16"],
        ),
    },
];

/// The entry symbols of the bf16 kernels: [`F16_KERNELS`]'s, in the same
/// order, with `_bf16` appended (`attention::entry` emits both).
const BF16_ENTRIES: [&str; 16] = [
    "sdpa_mma_d64_bf16",
    "sdpa_mma_d128_bf16",
    "sdpa_wgmma_d64_bf16",
    "sdpa_wgmma_d128_bf16",
    "sdpa_split_d64_bf16",
    "sdpa_split_d128_bf16",
    "sdpa_split_wg_d64_bf16",
    "sdpa_split_wg_d128_bf16",
    "sdpa_split_n64_d64_bf16",
    "sdpa_split_n64_d128_bf16",
    "sdpa_wgmma_fp8pv_d64_bf16",
    "sdpa_wgmma_fp8pv_d128_bf16",
    "sdpa_wgmma_fp8pv_long_d128_bf16",
    "sdpa_split_n64_pairs_d64_bf16",
    "sdpa_decode_d64_bf16",
    "sdpa_decode_d128_bf16",
];

/// [`F16_KERNELS`], then each of them again writing bf16 under its
/// [`BF16_ENTRIES`] name: everything else (tiles, shared memory, prepass,
/// launch bounds) is the f16 kernel's.
const fn with_bf16_twins(f16: [KernelInfo; 16], bf16_entries: [&'static str; 16]) -> [KernelInfo; 32] {
    let mut all = [f16[0]; 32];
    let mut i = 0;
    while i < f16.len() {
        all[i] = f16[i];
        all[f16.len() + i] = KernelInfo { output: OutputDtype::Bf16, entry: bf16_entries[i], ..f16[i] };
        i += 1;
    }
    all
}

/// Every kernel the crate builds, in a fixed order: the f16 kernels, then
/// their bf16 twins.
pub const KERNELS: [KernelInfo; 32] = with_bf16_twins(F16_KERNELS, BF16_ENTRIES);

/// The f16 kernel of `variant` for `head_dim`, if one is built: the first
/// such row of [`KERNELS`] (the one the host's kernel selection runs unless
/// the problem says otherwise). [`KernelInfo::writing`] gives its bf16
/// twin.
pub fn find(variant: Variant, head_dim: u32) -> Option<&'static KernelInfo> {
    KERNELS.iter().find(|k| k.variant == variant && k.tiles.head_dim == head_dim)
}

impl KernelInfo {
    /// Threads of a block of this kernel and of each of its twins: the tile
    /// shape's warps, and a producer warpgroup where its roles have one.
    pub fn threads(&self) -> u32 {
        let producer = self.roles == Roles::ProducerWarpgroup;
        self.tiles.threads() + if producer { 128 } else { 0 }
    }

    /// This kernel's twin that writes `output` (itself if it does).
    pub fn writing(&'static self, output: OutputDtype) -> &'static KernelInfo {
        KERNELS
            .iter()
            .find(|k| {
                k.output == output
                    && k.variant == self.variant
                    && k.tiles == self.tiles
                    && k.pair_rows == self.pair_rows
            })
            .unwrap_or(self)
    }

    /// The entry that runs its problems over packed batches (`packed`) or
    /// not, computing `scores`: its own, or a twin's; `None` where no such
    /// twin is built.
    pub fn entry_for(&self, packed: bool, scores: ScoreForm) -> Option<&'static str> {
        let twin = match (packed, scores) {
            (false, ScoreForm::Plain) => return Some(self.entry),
            (true, ScoreForm::Plain) => self.packed,
            (false, ScoreForm::Window) => self.scores.map(|t| t.window),
            (false, ScoreForm::Softcap) => self.scores.and_then(|t| t.softcap),
            (true, ScoreForm::Window) => self.scores.and_then(|t| t.packed_window),
            (true, ScoreForm::Softcap) => self.scores.and_then(|t| t.packed_softcap),
        };
        twin.map(|t| t.entry(self.output))
    }

    /// Its twins' entries writing its output type, with the launch bounds
    /// each asks for: the packed twin, then the score twins.
    pub fn twins(&self) -> impl Iterator<Item = (&'static str, u32)> + use<> {
        let scores = self.scores.map(|t| [Some(t.window), t.softcap, t.packed_window, t.packed_softcap]);
        let output = self.output;
        let scores = scores.into_iter().flatten().flatten();
        self.packed.into_iter().chain(scores).map(move |t| (t.entry(output), t.min_blocks_per_sm))
    }

    /// Whether it runs problems of `seq_q` queries and `seq_kv` keys: every
    /// kernel does, but one with [`KernelInfo::pair_rows`] only even
    /// lengths (an odd one's last pair row would reach past its head).
    pub const fn runs_on(&self, seq_q: u32, seq_kv: u32) -> bool {
        !self.pair_rows || (seq_q % 2 == 0 && seq_kv % 2 == 0)
    }
}

/// The head dimensions the kernels serve.
pub const HEAD_DIMS: [u32; 2] = [64, 128];

/// `naive` at D = 64, a retired variant whose PTX entries `attention::entry`
/// still emits outside [`KERNELS`]: goes with them.
pub const NAIVE_D64: TileShape = TileShape { head_dim: 64, block_m: 4, block_n: 1, stages: 0, warps: 4, splits: 1 };
/// `naive` at D = 128 (see [`NAIVE_D64`]).
pub const NAIVE_D128: TileShape = TileShape { head_dim: 128, ..NAIVE_D64 };
