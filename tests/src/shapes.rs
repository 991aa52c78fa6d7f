//! The fuzzing strategy shared by the CPU and GPU suites: shapes that sit on
//! and around every tile edge of the kernel under test, taken from that
//! kernel's own tile shape, so a new variant gets its own edges for free.

use kernels_gpu::kernels::KernelInfo;
use kernels_gpu::params::TILE_KEYS;
use kernels_gpu::variant::OutputDtype;
use proptest::prelude::*;
use sdpa::reference::ScoreRule;

use crate::scores::Scores;

/// The sizes of one attention problem, shared by the gate cases and the
/// fuzz cases.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CaseShape {
    /// Batch.
    pub batch: usize,
    /// Query heads.
    pub heads_q: usize,
    /// Key/value heads.
    pub heads_kv: usize,
    /// Query length.
    pub seq_q: usize,
    /// Key/value length.
    pub seq_kv: usize,
    /// Head dimension.
    pub head_dim: usize,
    /// Causal masking.
    pub causal: bool,
}

impl CaseShape {
    /// `[B, Hq, Sq, D]`.
    pub fn q_shape(&self) -> [usize; 4] {
        [self.batch, self.heads_q, self.seq_q, self.head_dim]
    }

    /// `[B, Hkv, Skv, D]`.
    pub fn kv_shape(&self) -> [usize; 4] {
        [self.batch, self.heads_kv, self.seq_kv, self.head_dim]
    }
}

/// One fuzz case.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FuzzCase {
    /// The sizes (head dimension: the kernel's).
    pub shape: CaseShape,
    /// log10 of the factors applied to the Q, K and V scales (see
    /// [`fuzz_cases`] for their range).
    pub scale_exponents: [i8; 3],
    /// Seed of the random inputs.
    pub seed: u64,
    /// A sliding window and a softcap (their `causal` the shape's), for
    /// the cases of a kernel's score twins
    /// (`release_cases::release_scored_case`); `None`: scores as they are.
    pub scores: Option<Scores>,
}

impl FuzzCase {
    /// Which keys each row sees and how its scores are capped, as the f64
    /// reference takes them.
    pub fn rule(&self) -> ScoreRule {
        self.scores.map_or(ScoreRule::causal(self.shape.causal), |s| s.rule())
    }
}

/// The smallest scale exponent of Q, K and V (factor 10^-3).
pub const SCALE_EXPONENT_MIN: i8 = -3;
/// The largest scale exponent of Q and of K, and of their sum (the
/// product of their factors at most 10; [`fuzz_cases`] says why).
pub const QK_EXPONENT_MAX: i8 = 1;

/// The largest scale exponent of V for `kernel`: 30 for a kernel that
/// writes bf16 (outputs far beyond f16's range), else 3.
pub fn v_exponent_max(kernel: &KernelInfo) -> i8 {
    if kernel.output == OutputDtype::Bf16 { 30 } else { 3 }
}

/// Lengths on and around the multiples of `block` (k*block - 1, k*block,
/// k*block + 1 for k = 1..=max_multiple), plus 1 and 2.
pub fn edge_lengths(block: usize, max_multiple: usize) -> Vec<usize> {
    let mut v = vec![1, 2];
    for k in 1..=max_multiple {
        for len in [k * block - 1, k * block, k * block + 1] {
            if len >= 1 && !v.contains(&len) {
                v.push(len);
            }
        }
    }
    v
}

/// The strategy for `kernel`: Sq clusters on BLOCK_M edges and Skv on
/// BLOCK_N edges (or the other way round, so Sq != Skv both ways), B in 1..=2,
/// Hkv in {1, 2}, Hq = Hkv x {1, 2, 4} (<= `max_heads_q`), causal on/off,
/// a fresh seed, and scale factors: V's 10^-3 ..= 10^3 (10^30 for a kernel
/// that writes bf16: outputs far beyond f16's range); Q's and K's
/// 10^-3 ..= 10^1 with their product at most 10 (scores up to 10x sharper
/// than unit-scale inputs). Beyond that the `wgmma` kernel's Q·K^T, which
/// Hopper accumulates in FP8 mode with about 14 mantissa bits (not full f32),
/// flips near-tied maxima of almost one-hot rows: measured on an H200 at a
/// product of 10^3, max error 0.2-0.26 on 0.1-0.2% of the elements, relative
/// L2 error 7e-3 to 9e-3 (see lab/).
pub fn fuzz_cases(kernel: &KernelInfo, max_multiple: usize, max_heads_q: usize) -> impl Strategy<Value = FuzzCase> {
    let t = kernel.tiles;
    let m_edges = edge_lengths(t.block_m as usize, max_multiple);
    let n_edges = edge_lengths(t.block_n.max(8) as usize, max_multiple);
    let head_dim = t.head_dim as usize;
    let lengths = prop_oneof![
        (prop::sample::select(m_edges.clone()), prop::sample::select(n_edges.clone())),
        (prop::sample::select(n_edges), prop::sample::select(m_edges)),
    ];
    let heads = (prop::sample::select(vec![1usize, 2]), prop::sample::select(vec![1usize, 2, 4]))
        .prop_map(move |(kv, group)| (kv * group, kv))
        .prop_filter("heads_q within the limit", move |(hq, _)| *hq <= max_heads_q);
    let scales = (
        SCALE_EXPONENT_MIN..=QK_EXPONENT_MAX,
        SCALE_EXPONENT_MIN..=QK_EXPONENT_MAX,
        SCALE_EXPONENT_MIN..=v_exponent_max(kernel),
    )
        .prop_filter("q*k scale product at most 10", |(q, k, _)| q + k <= QK_EXPONENT_MAX)
        .prop_map(|(q, k, v)| [q, k, v]);
    let kernel = *kernel;
    (1usize..=2, heads, lengths, any::<bool>(), scales, any::<u64>()).prop_map(
        move |(batch, (heads_q, heads_kv), (seq_q, seq_kv), causal, scale_exponents, seed)| {
            let seq_q = runnable_length(&kernel, seq_q, seed % 2 == 0);
            let seq_kv = runnable_length(&kernel, seq_kv, seed % 4 < 2);
            FuzzCase {
                shape: CaseShape { batch, heads_q, heads_kv, seq_q, seq_kv, head_dim, causal },
                scale_exponents,
                seed,
                scores: None,
            }
        },
    )
}

/// `len` as `kernel` runs it: unchanged, but for a kernel that runs only
/// even lengths (`KernelInfo::runs_on`) an odd length moves one row up
/// (`up`, or from 1) or down, still straddling the tile edge it was on.
pub fn runnable_length(kernel: &KernelInfo, len: usize, up: bool) -> usize {
    if len % 2 == 0 || !kernel.pair_rows {
        len
    } else if len == 1 || up {
        len + 1
    } else {
        len - 1
    }
}

/// The query lengths on and around `kernel`'s query tile edges: one and
/// two blocks of BLOCK_M rows (and more for blocks under 64 rows, up to
/// 128 rows), each -1, +0, +1, plus 1 and 2 ([`edge_lengths`]).
pub fn query_edges(kernel: &KernelInfo) -> Vec<usize> {
    let block = kernel.tiles.block_m as usize;
    edge_lengths(block, (128 / block).max(2))
}

/// The key lengths on and around `kernel`'s key tile edges: every multiple
/// of BLOCK_N up to one block past the blocks it has in flight (its key
/// groups x its K/V stages, where its ring of stages wraps), each -1, +0,
/// +1, plus 1 and 2; for a kernel with a `kv_tiles` prepass, also every
/// multiple of the prepass's tile ([`kernels_gpu::params::TILE_KEYS`]) up
/// to there, where its first key block changes size.
pub fn key_edges(kernel: &KernelInfo) -> Vec<usize> {
    let t = kernel.tiles;
    let block = t.block_n.max(8) as usize;
    let blocks = (t.splits * t.stages.max(1)) as usize + 1;
    let mut edges = edge_lengths(block, blocks);
    if kernel.prepass.is_some() {
        let tile = TILE_KEYS as usize;
        for len in edge_lengths(tile, blocks * block / tile) {
            if !edges.contains(&len) {
                edges.push(len);
            }
        }
    }
    edges.sort_unstable();
    edges
}
