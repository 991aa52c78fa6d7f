//! The table of compiled kernels: every variant x head dimension, with its
//! stable name, PTX entry symbol, tile shape and shared memory. The host
//! launches from it, xtask gates it, the tests take tile edges from it.

use crate::cost;
use crate::params::kv_tiles_threads;
use crate::tiles::{KvTilesSmemPlan, MmaSmemPlan, SplitSmemPlan, TileShape, WgmmaSmemPlan};

/// A kernel variant (an algorithm); each is built for every head dimension
/// (the sm_90a-only ones in the sm_90a image only).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Variant {
    /// The simplest correct kernel: one warp per query row, f32 math,
    /// online softmax, no shared memory. The on-GPU baseline.
    Naive,
    /// Flash-style tiled kernel: Q·K^T on `mma.sync` e4m3, online softmax in
    /// registers, P·V on `mma.sync` f16 (V converted exactly from e4m3),
    /// K/V streamed with `cp.async` through a multi-stage buffer.
    Mma,
    /// Hopper only (sm_90a): a prepass cuts K and V (transposed to f16)
    /// into tiles laid out as shared memory holds them, which one thread
    /// brings in by bulk copies; then Q·K^T on `wgmma` e4m3 with Q and K
    /// read from shared memory by descriptor, P·V on `wgmma` f16 with P from registers; two warpgroups
    /// (128 query rows) per block; the softmax of key block j + 1 overlaps
    /// P·V of block j.
    Wgmma,
    /// For short sequences: `mma` with the key blocks of each query block
    /// shared out between groups of warps (key block `j` to group
    /// `j % splits`), each with its own K/V buffers and online softmax, so
    /// a block's critical path is `1 / splits` of the keys; the groups merge
    /// their partial outputs through shared memory at the end. V stays E4M3
    /// in shared memory and becomes f16 in registers.
    Split,
    /// Hopper only (sm_90a): `split` with 64 query rows per block and key
    /// groups of four warps (a warpgroup each) walking 64-key blocks, whose
    /// Q·K^T is one `wgmma` e4m3 per 32 head columns straight from the Q
    /// and K tiles the tensor copies land (no K conversion, no Q
    /// fragments); softmax, P·V and merge as `split`'s. Half `split`'s
    /// blocks: faster where those still fill the GPU.
    SplitWg,
    /// Hopper only (sm_90a): `split` with 64-key blocks (`split`'s are 32):
    /// half the key steps per group, so the per-step parts that do not
    /// grow with the keys (the wait, the row maximum and sum, the rescale)
    /// come half as often. At D = 64 one block per SM (154 registers, 118.5
    /// KB with its merge's exchange apart), at D = 128 two (214 registers,
    /// 78.9 KB). Faster than `split`
    /// where its blocks fit the GPU (H100 run 131: (1,8,512,64) 5.04 vs 5.63
    /// us, (2,8,256,64) 3.57 vs 3.82; at D = 128 0.76-0.93x `split`'s time
    /// at every shape of 256+ keys but one, run 126). At D = 64 each query
    /// block walks its key blocks rotated (`schedule::walks_rotated`), folds
    /// its softmax rows as four chains and keeps the merge's exchange apart
    /// (H100 record 2026-11-25-14: (1,8,512,64) 4.60 us).
    SplitN64,
    /// Hopper only (sm_90a), opt-in (the cost model never picks it):
    /// `wgmma` with P·V on the FP8 tensor cores, P rounded to E4M3 (3
    /// mantissa bits) and multiplied by V's own E4M3 bytes
    /// (`wgmma.m64nNk32.e4m3`), which the prepass lays out transposed in a
    /// key order that lets each thread pack its own accumulator elements
    /// (`layout::fp8_pv_key`); the row sums are added in f32. Half of
    /// P·V's tensor time: 0.92-0.95x `wgmma`'s time on D = 128's long rows,
    /// 0.98-0.99x at D = 64 (H100 run 228, results/STAGES.md stage 148), at
    /// an output error of 2.6-2.8e-2 relative L2 where the softmax is flat,
    /// which its own, looser gate allows ([`Variant::lower_precision`]).
    /// At D = 128 on long rows (2048+ keys, 10240+ when causal) [`select`]
    /// runs it as two warpgroups with 192-key blocks
    /// ([`WGMMA_FP8PV_LONG_D128`]).
    WgmmaFp8Pv,
}

impl Variant {
    /// Every variant, in table order.
    pub const ALL: [Variant; 7] = [
        Variant::Naive,
        Variant::Mma,
        Variant::Wgmma,
        Variant::Split,
        Variant::SplitWg,
        Variant::SplitN64,
        Variant::WgmmaFp8Pv,
    ];

    /// The stable name used by the CLI, xtask and the results files.
    pub const fn name(self) -> &'static str {
        match self {
            Variant::Naive => "naive",
            Variant::Mma => "mma",
            Variant::Wgmma => "wgmma",
            Variant::Split => "split",
            Variant::SplitWg => "split-wg",
            Variant::SplitN64 => "split-n64",
            Variant::WgmmaFp8Pv => "wgmma-fp8pv",
        }
    }

    /// Whether the variant's P·V takes P and V as E4M3 (`wgmma-fp8pv`).
    pub const fn pv_e4m3(self) -> bool {
        matches!(self, Variant::WgmmaFp8Pv)
    }

    /// Whether the variant trades accuracy for speed beyond the library's
    /// default contract (P rounded to E4M3): it runs only when asked for by
    /// name, and is judged by its own tolerance (the host's
    /// `metrics::Tolerance::of`).
    pub const fn lower_precision(self) -> bool {
        self.pv_e4m3()
    }

    /// Whether the variant runs `wgmma`'s kernel body (`wgmma`,
    /// `wgmma-fp8pv`), with its `kv_tiles` prepass.
    pub const fn runs_wgmma_body(self) -> bool {
        matches!(self, Variant::Wgmma | Variant::WgmmaFp8Pv)
    }

    /// Whether the variant runs `split`'s kernel body (`split`, `split-wg`,
    /// `split-n64`), whose sm_90a build copies its tiles by tensor copies
    /// from maps the host encodes per problem.
    pub const fn runs_split_body(self) -> bool {
        matches!(self, Variant::Split | Variant::SplitWg | Variant::SplitN64)
    }

    /// Whether the variant's sm_90a build at head dimension `head_dim`
    /// copies tiles by tensor copies from the maps the host encodes per
    /// problem (`params::TileMaps`): the `split` body's Q, K and V, and
    /// `wgmma`'s K where [`crate::params::k_by_tensor_copy`].
    pub const fn uses_tile_maps(self, head_dim: u32) -> bool {
        self.runs_split_body() || (self.runs_wgmma_body() && crate::params::k_by_tensor_copy(head_dim))
    }

    /// Looks a variant up by its stable name.
    pub fn from_name(name: &str) -> Option<Variant> {
        Variant::ALL.into_iter().find(|v| v.name() == name)
    }
}

/// The element type a kernel writes O in. Every kernel accumulates in f32
/// and rounds once, at the store; each is built for both types.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum OutputDtype {
    /// IEEE half precision (max 65504): outputs up to `448 x v_scale` must
    /// fit, so V's scales are limited to 146.
    #[default]
    F16,
    /// bfloat16: f32's range, 8 significant bits (f16 has 11).
    Bf16,
}

impl OutputDtype {
    /// Both types, f16 first.
    pub const ALL: [OutputDtype; 2] = [OutputDtype::F16, OutputDtype::Bf16];

    /// The stable name the CLI takes (`--out-dtype`) and prints: "f16" or
    /// "bf16".
    pub const fn name(self) -> &'static str {
        match self {
            OutputDtype::F16 => "f16",
            OutputDtype::Bf16 => "bf16",
        }
    }

    /// Looks a type up by [`OutputDtype::name`].
    pub fn from_name(name: &str) -> Option<OutputDtype> {
        OutputDtype::ALL.into_iter().find(|d| d.name() == name)
    }

    /// The largest finite value of the type.
    pub const fn max(self) -> f32 {
        match self {
            OutputDtype::F16 => 65504.0,
            OutputDtype::Bf16 => 3.389_531_4e38,
        }
    }
}

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
    /// Whether its tensor copies bring Q, K and V as 128-byte rows of two
    /// rows each (`layout::RowLayout::SwizzledPairs`; the host encodes
    /// their maps so): half the copy requests, each a whole 128-byte line.
    /// Such a kernel runs only on even query and key lengths
    /// ([`KernelInfo::runs_on`]).
    pub pair_rows: bool,
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

/// `naive` at D = 64: four warps, one query row each.
pub const NAIVE_D64: TileShape = TileShape { head_dim: 64, block_m: 4, block_n: 1, stages: 0, warps: 4, splits: 1 };
/// `naive` at D = 128.
pub const NAIVE_D128: TileShape = TileShape { head_dim: 128, ..NAIVE_D64 };
/// `mma` at D = 64: 4 warps x 16 rows, 64-key blocks, double-buffered K/V.
pub const MMA_D64: TileShape = TileShape { head_dim: 64, block_m: 64, block_n: 64, stages: 2, warps: 4, splits: 1 };
/// `mma` at D = 128: 32-key blocks, so the block fits 48 KB of shared
/// memory and two blocks fit an L4 (sm_89) multiprocessor.
pub const MMA_D128: TileShape = TileShape { head_dim: 128, block_n: 32, ..MMA_D64 };

/// `wgmma` at D = 64: 2 warpgroups x 64 rows, 64-key blocks, K/Vt 4 deep
/// (the pipelined loop holds block j's Vt and block j + 1's K while blocks
/// j + 2 and j + 3 load).
pub const WGMMA_D64: TileShape = TileShape { head_dim: 64, block_m: 128, block_n: 64, stages: 4, warps: 8, splits: 1 };
/// `wgmma` at D = 128: 3 warpgroups (192 rows) share each K/Vt tile.
pub const WGMMA_D128: TileShape = TileShape { head_dim: 128, block_m: 192, warps: 12, ..WGMMA_D64 };
/// `wgmma-fp8pv` at D = 128 on long rows ([`select`]): 2
/// warpgroups (128 rows) share each K/Vt stage of 192 keys (three prepass
/// tiles; a head's first key block takes the tiles that leave every later
/// one whole), 213 KB.
pub const WGMMA_FP8PV_LONG_D128: TileShape =
    TileShape { head_dim: 128, block_m: 128, block_n: 192, stages: 4, warps: 8, splits: 1 };

/// Keys from which [`select`] runs `wgmma-fp8pv` at D = 128 as
/// [`WGMMA_FP8PV_LONG_D128`] when the problem is not causal. Against the
/// three-warpgroup kernel in the same runs (H100, results/STAGES.md
/// stages 152 and 153): 0.909-0.914x the time at 16320-16384 keys, 0.940
/// at 4032, 0.956-0.965 at 4096 (a partial first block), 0.961 at 3072 and
/// 0.940 at 2048 (run 247), but 1.044 at 1024 and 1.081-1.116 at 576-1152
/// (fewer 128-row blocks than SMs several times over: late, thin waves).
pub const FP8PV_LONG_MIN_KEYS: u32 = 2048;

/// Keys from which [`select`] runs `wgmma-fp8pv` at D = 128 as
/// [`WGMMA_FP8PV_LONG_D128`] under causal masking, where every 128-row
/// query block has its own partial first key block and a diagonal one:
/// 0.976 of the three-warpgroup kernel's time at 10240 keys, 0.967 at
/// 12288, 0.954 at 14336, 0.955 at 16384 and 0.944 at 32768, but 1.011
/// at 8192 and 1.029-1.039 at 4032-4096 (H100 runs 242, 243, 247 and
/// 251; results/STAGES.md stages 153-153b).
pub const FP8PV_LONG_MIN_CAUSAL_KEYS: u32 = 10240;

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
/// still one per SM), so its key groups need not meet before they publish:
/// -0.5..-2% (H100 runs 143-146, results/STAGES.md stage 95).
pub const SPLIT_N64_D64_EXCHANGE_APART: bool = true;
/// `split-n64` at D = 128: `split`'s 2 groups of 2 row warps with 64-key
/// blocks. (Stage 68 measured this shape 1.7-1.9x slower than `split` on
/// the H200 before `split`'s tensor copies; with them, 0.76-0.93x.)
pub const SPLIT_N64_D128: TileShape = TileShape { block_n: 64, ..SPLIT_D128 };

/// The key lengths at which `split-n64` D = 64 runs its pair-row kernel
/// (`sdpa_split_n64_pairs_d64`, [`KernelInfo::pair_rows`]) where it runs
/// (even query and key lengths, [`KernelInfo::runs_on`]): from 257 keys, where some group has two key blocks in flight, to
/// 512, the last length whose key blocks are all in flight at once (4
/// groups x 2 stages x 64 keys). Measured on three H200s against the
/// plain rows (runs 276-278, results/STAGES.md stage 168): 0.976-0.989 at
/// (1,8,512,64), 0.984-0.985 at (2,8,512,64), 0.987 at 448 keys, 0.992 at
/// 384, 0.966-0.970 causal at 512; 0.997-1.004 at 256 keys; 1.021-1.028
/// at 1024-2048, where groups refill their stages.
pub const SPLIT_N64_PAIRS_KEYS: core::ops::RangeInclusive<u32> = 257..=512;

/// The f16 kernels, in a fixed order.
const F16_KERNELS: [KernelInfo; 16] = [
    KernelInfo {
        variant: Variant::Naive,
        output: OutputDtype::F16,
        entry: "sdpa_naive_d64",
        tiles: NAIVE_D64,
        smem_bytes: 0,
        sm90a_only: false,
        prepass: None,
        min_blocks_per_sm: 0,
        pair_rows: false,
    },
    KernelInfo {
        variant: Variant::Naive,
        output: OutputDtype::F16,
        entry: "sdpa_naive_d128",
        tiles: NAIVE_D128,
        smem_bytes: 0,
        sm90a_only: false,
        prepass: None,
        min_blocks_per_sm: 0,
        pair_rows: false,
    },
    KernelInfo {
        variant: Variant::Mma,
        output: OutputDtype::F16,
        entry: "sdpa_mma_d64",
        tiles: MMA_D64,
        smem_bytes: MmaSmemPlan::new(MMA_D64).total,
        sm90a_only: false,
        prepass: None,
        min_blocks_per_sm: 0,
        pair_rows: false,
    },
    KernelInfo {
        variant: Variant::Mma,
        output: OutputDtype::F16,
        entry: "sdpa_mma_d128",
        tiles: MMA_D128,
        smem_bytes: MmaSmemPlan::new(MMA_D128).total,
        sm90a_only: false,
        prepass: None,
        min_blocks_per_sm: 0,
        pair_rows: false,
    },
    KernelInfo {
        variant: Variant::Wgmma,
        output: OutputDtype::F16,
        entry: "sdpa_wgmma_d64",
        tiles: WGMMA_D64,
        smem_bytes: WgmmaSmemPlan::new(WGMMA_D64, false).total,
        sm90a_only: true,
        prepass: Some(Prepass::kv_tiles("sdpa_kv_tiles_d64", 64)),
        min_blocks_per_sm: 0,
        pair_rows: false,
    },
    KernelInfo {
        variant: Variant::Wgmma,
        output: OutputDtype::F16,
        entry: "sdpa_wgmma_d128",
        tiles: WGMMA_D128,
        smem_bytes: WgmmaSmemPlan::new(WGMMA_D128, false).total,
        sm90a_only: true,
        prepass: Some(Prepass::kv_tiles("sdpa_kv_tiles_d128", 128)),
        min_blocks_per_sm: 0,
        pair_rows: false,
    },
    KernelInfo {
        variant: Variant::Split,
        output: OutputDtype::F16,
        entry: "sdpa_split_d64",
        tiles: SPLIT_D64,
        smem_bytes: SplitSmemPlan::new(SPLIT_D64, false).total,
        sm90a_only: false,
        prepass: None,
        min_blocks_per_sm: 0,
        pair_rows: false,
    },
    KernelInfo {
        variant: Variant::Split,
        output: OutputDtype::F16,
        entry: "sdpa_split_d128",
        tiles: SPLIT_D128,
        smem_bytes: SplitSmemPlan::new(SPLIT_D128, false).total,
        sm90a_only: false,
        prepass: None,
        min_blocks_per_sm: 0,
        pair_rows: false,
    },
    KernelInfo {
        variant: Variant::SplitWg,
        output: OutputDtype::F16,
        entry: "sdpa_split_wg_d64",
        tiles: SPLIT_WG_D64,
        smem_bytes: SplitSmemPlan::new(SPLIT_WG_D64, false).total,
        sm90a_only: true,
        prepass: None,
        // Two blocks per SM (128 registers; 137 free) took 14-24% off
        // every shape of more than 132 blocks (H100 run 114, stage 80).
        min_blocks_per_sm: 2,
        pair_rows: false,
    },
    KernelInfo {
        variant: Variant::SplitWg,
        output: OutputDtype::F16,
        entry: "sdpa_split_wg_d128",
        tiles: SPLIT_WG_D128,
        smem_bytes: SplitSmemPlan::new(SPLIT_WG_D128, false).total,
        sm90a_only: true,
        prepass: None,
        min_blocks_per_sm: 0,
        pair_rows: false,
    },
    KernelInfo {
        variant: Variant::SplitN64,
        output: OutputDtype::F16,
        entry: "sdpa_split_n64_d64",
        tiles: SPLIT_N64_D64,
        smem_bytes: SplitSmemPlan::new(SPLIT_N64_D64, SPLIT_N64_D64_EXCHANGE_APART).total,
        sm90a_only: true,
        prepass: None,
        min_blocks_per_sm: 0,
        pair_rows: false,
    },
    KernelInfo {
        variant: Variant::SplitN64,
        output: OutputDtype::F16,
        entry: "sdpa_split_n64_d128",
        tiles: SPLIT_N64_D128,
        smem_bytes: SplitSmemPlan::new(SPLIT_N64_D128, false).total,
        sm90a_only: true,
        prepass: None,
        min_blocks_per_sm: 0,
        pair_rows: false,
    },
    KernelInfo {
        variant: Variant::WgmmaFp8Pv,
        output: OutputDtype::F16,
        entry: "sdpa_wgmma_fp8pv_d64",
        tiles: WGMMA_D64,
        smem_bytes: WgmmaSmemPlan::new(WGMMA_D64, true).total,
        sm90a_only: true,
        prepass: Some(Prepass::kv_tiles("sdpa_kv_tiles_fp8pv_d64", 64)),
        min_blocks_per_sm: 0,
        pair_rows: false,
    },
    KernelInfo {
        variant: Variant::WgmmaFp8Pv,
        output: OutputDtype::F16,
        entry: "sdpa_wgmma_fp8pv_d128",
        tiles: WGMMA_D128,
        smem_bytes: WgmmaSmemPlan::new(WGMMA_D128, true).total,
        sm90a_only: true,
        prepass: Some(Prepass::kv_tiles("sdpa_kv_tiles_fp8pv_d128", 128)),
        min_blocks_per_sm: 0,
        pair_rows: false,
    },
    KernelInfo {
        variant: Variant::WgmmaFp8Pv,
        output: OutputDtype::F16,
        entry: "sdpa_wgmma_fp8pv_long_d128",
        tiles: WGMMA_FP8PV_LONG_D128,
        smem_bytes: WgmmaSmemPlan::new(WGMMA_FP8PV_LONG_D128, true).total,
        sm90a_only: true,
        prepass: Some(Prepass::kv_tiles("sdpa_kv_tiles_fp8pv_d128", 128)),
        min_blocks_per_sm: 0,
        pair_rows: false,
    },
    KernelInfo {
        variant: Variant::SplitN64,
        output: OutputDtype::F16,
        entry: "sdpa_split_n64_pairs_d64",
        tiles: SPLIT_N64_D64,
        smem_bytes: SplitSmemPlan::new(SPLIT_N64_D64, SPLIT_N64_D64_EXCHANGE_APART).total,
        sm90a_only: true,
        prepass: None,
        min_blocks_per_sm: 0,
        pair_rows: true,
    },
];

/// The entry symbols of the bf16 kernels: [`F16_KERNELS`]'s, in the same
/// order, with `_bf16` appended (`attention::entry` emits both).
const BF16_ENTRIES: [&str; 16] = [
    "sdpa_naive_d64_bf16",
    "sdpa_naive_d128_bf16",
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
/// such row of [`KERNELS`] (the one [`select`] runs unless the problem
/// says otherwise). [`KernelInfo::writing`] gives its bf16 twin.
pub fn find(variant: Variant, head_dim: u32) -> Option<&'static KernelInfo> {
    KERNELS.iter().find(|k| k.variant == variant && k.tiles.head_dim == head_dim)
}

impl KernelInfo {
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

    /// Whether it runs problems of `seq_q` queries and `seq_kv` keys: every
    /// kernel does, but one with [`KernelInfo::pair_rows`] only even
    /// lengths (an odd one's last pair row would reach past its head).
    pub const fn runs_on(&self, seq_q: u32, seq_kv: u32) -> bool {
        !self.pair_rows || (seq_q % 2 == 0 && seq_kv % 2 == 0)
    }
}

/// The kernel that runs `variant` on a problem of `head_dim`, `seq_q`
/// queries, `seq_kv` keys and `causal` masking: [`find`]'s, except
/// - `wgmma-fp8pv` at D = 128 on problems of at least
///   [`FP8PV_LONG_MIN_KEYS`] keys ([`FP8PV_LONG_MIN_CAUSAL_KEYS`] when
///   causal), which take its 192-key kernel ([`WGMMA_FP8PV_LONG_D128`]);
/// - a variant with a pair-row kernel at `head_dim` (`split-n64` at
///   D = 64), which takes it where it runs ([`KernelInfo::runs_on`]) and
///   the keys are in [`SPLIT_N64_PAIRS_KEYS`];
///
/// each in its twin that writes `output`.
pub fn select(
    variant: Variant,
    head_dim: u32,
    seq_q: u32,
    seq_kv: u32,
    causal: bool,
    output: OutputDtype,
) -> Option<&'static KernelInfo> {
    let min_keys = if causal { FP8PV_LONG_MIN_CAUSAL_KEYS } else { FP8PV_LONG_MIN_KEYS };
    let long = variant == Variant::WgmmaFp8Pv && head_dim == 128 && seq_kv >= min_keys;
    let pair_rows = KERNELS
        .iter()
        .find(|k| k.pair_rows && k.variant == variant && k.tiles.head_dim == head_dim)
        .filter(|k| k.runs_on(seq_q, seq_kv) && SPLIT_N64_PAIRS_KEYS.contains(&seq_kv));
    let kernel = if long {
        KERNELS.iter().find(|k| k.tiles == WGMMA_FP8PV_LONG_D128 && k.variant == variant)
    } else {
        pair_rows.or_else(|| find(variant, head_dim))
    };
    kernel.map(|k| k.writing(output))
}

/// The size of an attention problem, as [`recommended`] sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Workload {
    /// Batch size B.
    pub batch: u32,
    /// Query heads Hq.
    pub heads_q: u32,
    /// Query length Sq.
    pub seq_q: u32,
    /// Key length Skv.
    pub seq_kv: u32,
    /// Head dimension D.
    pub head_dim: u32,
    /// Causal masking.
    pub causal: bool,
}

impl Workload {
    /// The problem of Q of shape `q_shape` and K/V of shape `kv_shape`
    /// (`[B, H, S, D]`), causal or not; a size past `u32` saturates (the
    /// launch validation refuses such problems).
    pub fn new(q_shape: [usize; 4], kv_shape: [usize; 4], causal: bool) -> Self {
        let dim = |x: usize| u32::try_from(x).unwrap_or(u32::MAX);
        Workload {
            batch: dim(q_shape[0]),
            heads_q: dim(q_shape[1]),
            seq_q: dim(q_shape[2]),
            seq_kv: dim(kv_shape[2]),
            head_dim: dim(q_shape[3]),
            causal,
        }
    }

    /// The blocks of `rows` query rows over batch and heads, halved (rounded
    /// up) under causal masking, whose blocks see half the keys on average.
    pub fn blocks(&self, rows: u32) -> u64 {
        let blocks = self.batch as u64 * self.heads_q as u64 * self.seq_q.div_ceil(rows) as u64;
        if self.causal { blocks.div_ceil(2) } else { blocks }
    }

    /// The query blocks `wgmma` would launch ([`Workload::blocks`] of its
    /// tile's rows, from [`KERNELS`]: 128 at D = 64, 192 at D = 128; 128 for
    /// a head dimension without a kernel): how well the long-sequence kernel
    /// would fill the GPU.
    pub fn wgmma_blocks(&self) -> u64 {
        self.blocks(find(Variant::Wgmma, self.head_dim).map_or(WGMMA_D64.block_m, |k| k.tiles.block_m))
    }

    /// The blocks `split-wg` would launch ([`Workload::blocks`] of 64 rows).
    pub fn split_wg_blocks(&self) -> u64 {
        self.blocks(find(Variant::SplitWg, self.head_dim).map_or(SPLIT_WG_D64.block_m, |k| k.tiles.block_m))
    }

    /// The keys a query block sees on average, as [`recommended`] weighs a
    /// block's chain: `seq_kv`, halved (rounded up) under causal masking.
    pub fn split_keys(&self) -> u32 {
        if self.causal { self.seq_kv.div_ceil(2) } else { self.seq_kv }
    }
}

/// Longest key length for which [`recommended`] picks `split` on sm_90a,
/// counted as [`Workload::split_keys`] (halved under causal masking): 2048
/// at D = 64, 1024 at D = 128. Measured on the H200 (record 2026-11-25-6,
/// after `split`'s tensor copies, results/STAGES.md stages 70-71), where
/// `wgmma` fills few SMs: `split` wins at (1,4,2048,64) 21.9 vs `wgmma`
/// 27.7 us, causal (1,8,2048,64) 25.7 vs 29.0 and causal (1,8,2048,128)
/// 38.1 vs 44.2 (1024 keys a block on average), and loses at
/// (1,6,1536,128) 45.6 vs 35.9 (1536). Before those stages the limit was
/// 1024 keys at both head dimensions, causal or not (record 2026-11-25-4).
pub const fn split_max_keys(head_dim: u32) -> u32 {
    if head_dim >= 128 { 1024 } else { 2048 }
}

/// Key lengths up to which [`recommended`] picks `split` off sm_90a, where
/// no crossover has been measured (the rule the first sessions set).
pub const SHORT_KEYS: u32 = 1024;

/// How much of the GPU, in fifths of its SMs, `wgmma` must be able to fill
/// ([`Workload::wgmma_blocks`]) before [`recommended`] prefers it to
/// `split` at head dimension `head_dim`: 3/5 at D = 64, 2/5 at D = 128,
/// where `split` has only two key groups per block (H200 record 2026-11-25:
/// D = 64, `split` wins at 64 blocks by 3-25% ((1,8,1024,64), (1,4,2048,64),
/// (1,8,2048,64,causal)) and `wgmma` at 96 ((1,12,1024,64), (1,8,1536,64));
/// D = 128, `split` at 48 blocks ((1,8,1024,128) 23.7 vs 26.9 us) and 44
/// ((1,8,2048,128,causal) 44.2 vs 46.3), `wgmma` at 64 ((1,8,1536,128)
/// 36.7 vs 52.0)).
pub const fn split_fill_fifths(head_dim: u32) -> u64 {
    if head_dim >= 128 { 2 } else { 3 }
}

/// Whether `split-wg`'s 64-row blocks ([`Workload::split_wg_blocks`]) fill
/// at least two thirds of the GPU's `multiprocessors`: there it beats
/// `split`, whose 32-row blocks take twice the chains of each 64 rows (H100
/// run 110: 0.78-0.96x of `split`'s time at 96-256 blocks, e.g. (3,8,256,64)
/// 4.27 vs 5.44 us, (1,8,1024,128) 15.7 vs 19.2; 1.08-1.29x at 64 blocks,
/// e.g. the mission shapes (2,8,256,64) 4.18 vs 3.87 and (1,8,512,64) 6.64
/// vs 5.76).
pub const fn split_wg_fills(blocks: u64, multiprocessors: u32) -> bool {
    3 * blocks >= 2 * multiprocessors as u64
}

/// The variant the library recommends for a problem on a device that runs
/// the sm_90a image (`sm90a`) or not, with `multiprocessors` SMs.
///
/// On sm_90a, from [`cost::MODEL_MIN_KEYS`] to [`cost::MODEL_MAX_KEYS`]
/// keys: the variant whose time the cost model ([`cost::predicted_us`])
/// predicts lowest among `split`, `split-wg`, `split-n64`, `wgmma` and
/// `mma`. At 212 of the 221 shapes the H100 has timed every variant on
/// (runs 116-205, each shape from its latest run, listed in
/// `host/tests/kernels.rs` with the misses), it picks the fastest or one
/// within 2%; out of sample, 23 of 24 (run 121,
/// before `split-n64`), 20 of 25 (run 125; 22 with the D = 128 fit made
/// after it) and 18 of 20 (run 127), the misses 2-19% behind (the worst:
/// causal problems of long keys). Stage 83 let the model choose
/// between `split` and `split-wg` too: the rule that chose first by
/// [`split_wg_fills`] picked `split` where `split-wg` was 8-18% faster at
/// 72-80 of its blocks (runs 124-125). Before the model, limits fitted by
/// hand (runs 110-117) picked right at 17 of 22 and 14 of 20 shapes out of
/// sample (`results/2026-11-25-predictions-run117.md`, `-run120.md`).
///
/// Shorter and longer problems take a rule. The split family's member is
/// `split-wg` where its 64-row blocks fill the GPU ([`split_wg_fills`]),
/// else `split`. Below [`cost::MODEL_MIN_KEYS`] keys, that member. Past
/// [`cost::MODEL_MAX_KEYS`], that member when a query block sees at most
/// [`split_max_keys`] keys ([`Workload::split_keys`]) and `wgmma` would
/// fill less of the GPU than [`split_fill_fifths`] says
/// ([`Workload::wgmma_blocks`]), since it shares each query block's keys
/// among groups of warps and so shortens each block's chain where there
/// are few blocks; else `wgmma` (fitted on the H200 records 2026-11-25, -2,
/// -4 and -6; 11 of 12 shapes at 1536-4096 keys right out of sample in
/// H100 run 105).
///
/// Elsewhere (not measured): `split` up to [`SHORT_KEYS`] keys, else `mma`.
pub fn recommended(w: &Workload, sm90a: bool, multiprocessors: u32) -> Variant {
    if !sm90a {
        return if w.seq_kv <= SHORT_KEYS { Variant::Split } else { Variant::Mma };
    }
    let family = if split_wg_fills(w.split_wg_blocks(), multiprocessors) { Variant::SplitWg } else { Variant::Split };
    if w.seq_kv < cost::MODEL_MIN_KEYS {
        return family;
    }
    if w.seq_kv <= cost::MODEL_MAX_KEYS {
        let time = |v: Variant| cost::predicted_us(w, v, multiprocessors).unwrap_or(f32::INFINITY);
        return cost::MODELLED.into_iter().fold(Variant::Split, |best, v| if time(v) < time(best) { v } else { best });
    }
    let few_blocks = 5 * w.wgmma_blocks() < split_fill_fifths(w.head_dim) * multiprocessors as u64;
    if w.split_keys() <= split_max_keys(w.head_dim) && few_blocks { family } else { Variant::Wgmma }
}

/// The head dimensions the kernels serve.
pub const HEAD_DIMS: [u32; 2] = [64, 128];

/// The shapes the benchmark times by default (`B,H,S,D[,causal]`): the
/// seeds' mission shapes, then the long-sequence targets of issue 4.
/// `sdpa bench` and `cargo xtask bench` both read this list.
pub const BENCH_SHAPES: [&str; 8] = [
    "2,8,256,64",
    "1,8,512,64",
    "4,16,2048,64",
    "2,16,8192,64",
    "2,16,8192,64,causal",
    "4,16,4096,128",
    "1,16,16384,128",
    "1,16,16384,128,causal",
];
