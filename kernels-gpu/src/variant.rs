//! The launch ABI's two enums: which algorithm a kernel runs ([`Variant`])
//! and what it writes O in ([`OutputDtype`]).

/// A kernel variant (an algorithm); each is built for every head dimension
/// (the sm_90a-only ones in the sm_90a image only).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Variant {
    /// Flash-style tiled kernel: Q·K^T on `mma.sync` e4m3, online softmax in
    /// registers, P·V on `mma.sync` f16 (V converted exactly from e4m3),
    /// K/V streamed with `cp.async` through a multi-stage buffer. The
    /// sm_89 path for long sequences.
    Mma,
    /// Hopper only (sm_90a): a prepass cuts K and V (transposed to f16)
    /// into tiles laid out as shared memory holds them, which one thread
    /// brings in by bulk copies; then Q·K^T on `wgmma` e4m3 with Q and K
    /// read from shared memory by descriptor, P·V on `wgmma` f16 with P
    /// from registers; two warpgroups (128 query rows) per block; the
    /// softmax of key block j + 1 overlaps P·V of block j.
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
    /// come half as often. Faster than `split` where its blocks fit the
    /// GPU in one wave. At D = 64 each query block walks its key blocks
    /// rotated (`schedule::walks_rotated`), folds its softmax rows as four
    /// chains and keeps the merge's exchange apart from its K/V tiles.
    SplitN64,
    /// Hopper only (sm_90a), opt-in (the recommendation never picks it):
    /// `wgmma` with P·V on the FP8 tensor cores, P rounded to E4M3 (3
    /// mantissa bits) and multiplied by V's own E4M3 bytes
    /// (`wgmma.m64nNk32.e4m3`), which the prepass lays out transposed in a
    /// key order that lets each thread pack its own accumulator elements
    /// (`layout::fp8_pv_key`); the row sums are added in f32. Half of
    /// P·V's tensor time (about 0.92-0.95x `wgmma`'s time on long rows at
    /// D = 128, 0.98-0.99x at D = 64), at an output error of 2.6-2.8e-2
    /// relative L2 where the softmax is flat, which its own, looser gate
    /// allows ([`Variant::lower_precision`]). At D = 128 on long rows it
    /// runs as two warpgroups with 192-key blocks
    /// ([`crate::kernels::WGMMA_FP8PV_LONG_D128`]).
    WgmmaFp8Pv,
    /// Few query rows against many keys (decoding): `split`'s body with
    /// the query heads that share a key/value head folded into one block's
    /// rows (each K/V byte read once for all of them), one row warp and
    /// four key groups of 64-key blocks, and the keys split across blocks
    /// where a problem has too few blocks for the GPU; a merge kernel then
    /// weighs the splits by their softmax statistics (`attention::decode`).
    Decode,
}

impl Variant {
    /// Every variant, in table order.
    pub const ALL: [Variant; 7] = [
        Variant::Mma,
        Variant::Wgmma,
        Variant::Split,
        Variant::SplitWg,
        Variant::SplitN64,
        Variant::WgmmaFp8Pv,
        Variant::Decode,
    ];

    /// The stable name used by the CLI, xtask and the results files.
    pub const fn name(self) -> &'static str {
        match self {
            Variant::Mma => "mma",
            Variant::Wgmma => "wgmma",
            Variant::Split => "split",
            Variant::SplitWg => "split-wg",
            Variant::SplitN64 => "split-n64",
            Variant::WgmmaFp8Pv => "wgmma-fp8pv",
            Variant::Decode => "decode",
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
        matches!(self, Variant::Split | Variant::SplitWg | Variant::SplitN64 | Variant::Decode)
    }

    /// Whether the variant's sm_90a build copies tiles by tensor copies
    /// from the maps the host encodes per problem (`params::TileMaps`): the
    /// `split` body's Q, K and V, and `wgmma`'s K.
    pub const fn uses_tile_maps(self) -> bool {
        self.runs_split_body() || self.runs_wgmma_body()
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
