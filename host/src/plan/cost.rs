//! A cost model of each sm_90a kernel's time per call, fitted on H100
//! measurements, by which [`super::recommend::recommended`] picks among the
//! variants for problems of [`MODEL_MIN_KEYS`] to [`MODEL_MAX_KEYS`] keys.
//!
//! A kernel's blocks are spread over the SMs; the busiest SM holds `L =
//! ceil(blocks / SMs)` of them and runs up to `blocks_per_sm` at once. Its
//! time is taken as rounds of concurrent blocks, each round as long as one
//! block's key loop times `1 + TWO_BLOCKS_COST x (concurrent - 1)`. With
//! that `load`, the model is
//!
//! ```text
//! time_us = fixed_us + per_key_us x keys x load + per_element_us x K/V elements / 1e6
//! ```
//!
//! where `keys` is `seq_kv` and, under causal masking, the blocks count half
//! (the work is half, each block's keys from none to all). The last term
//! stands for what grows with the inputs (the `wgmma` prepass, bytes
//! through L2). The coefficients are a least-squares fit of relative error
//! (`lab/scripts/fit-cost.py` reproduces them) of every variant at shapes of
//! 128-2048 keys on the H100; `wgmma`'s per-key and per-element terms are
//! then scaled for the faster key loops it has had since
//! ([`WGMMA_LEAN`], [`WGMMA_D64_ROW_SUMS_AND_FAST_MAX`]). The shapes timed
//! and the model's misses are listed in `host/tests/plan.rs`.

use super::workload::Workload;
use kernels_gpu::kernels::find;
use kernels_gpu::variant::Variant;

/// Keys up to which the recommendation trusts the model: the longest
/// measured.
pub const MODEL_MAX_KEYS: u32 = 2048;

/// Keys from which the recommendation trusts the model: the shortest
/// fitted (shorter problems are one key block of every kernel).
pub const MODEL_MIN_KEYS: u32 = 128;

/// `wgmma`'s time per key and per element relative to the build its
/// coefficients were fitted on: its leaner key loop measured 0.96-0.99x
/// the old one's time on the H100 and the H200. Scaling by it makes more
/// of the model's picks near `wgmma`'s boundary right.
pub const WGMMA_LEAN: f32 = 0.98;

/// `wgmma` D = 64's time per key and per element relative to the lean
/// build, after its row sums moved to the tensor cores and its lazy
/// maxima got a fast path: 0.93-0.96x at 512-2048 keys and 0.91-0.93x on
/// long rows (H100). D = 128 gained 2.5-9% too, but scaling its terms as
/// well made the picks no better: it stays unscaled.
pub const WGMMA_D64_ROW_SUMS_AND_FAST_MAX: f32 = 0.92;

/// How much longer a round takes per extra block running beside the first
/// on an SM: two blocks of `split` on an SM take 1.44x one.
pub const TWO_BLOCKS_COST: f32 = 0.44;

/// The variants the model has fitted, in table order: those the
/// recommendation chooses among and `sdpa plan` shows.
pub const MODELLED: [Variant; 5] = [Variant::Mma, Variant::Wgmma, Variant::Split, Variant::SplitWg, Variant::SplitN64];

/// One kernel's coefficients (microseconds) and how many of its blocks an
/// SM runs at once (as ptxas allocates it for sm_90a: `budgets.toml`'s
/// `min_blocks_per_sm`, which a test checks).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cost {
    /// Time of a call that does no work.
    pub fixed_us: f32,
    /// Time per 1000 keys of the busiest SM's load.
    pub per_kilokey_us: f32,
    /// Time per million K/V elements (batch x heads x `seq_kv` x D).
    pub per_mega_element_us: f32,
    /// Blocks resident per SM.
    pub blocks_per_sm: u32,
}

/// The fitted cost of `variant` at `head_dim` on sm_90a, if it was measured.
pub const fn cost(variant: Variant, head_dim: u32) -> Option<Cost> {
    const fn c(fixed_us: f32, per_kilokey_us: f32, per_mega_element_us: f32, blocks_per_sm: u32) -> Option<Cost> {
        Some(Cost { fixed_us, per_kilokey_us, per_mega_element_us, blocks_per_sm })
    }
    match (variant, head_dim) {
        (Variant::Mma, 64) => c(2.154, 15.41, 0.698, 4),
        (Variant::Mma, 128) => c(3.429, 25.68, 0.574, 3),
        (Variant::Wgmma, 64) => {
            let since_fit = WGMMA_LEAN * WGMMA_D64_ROW_SUMS_AND_FAST_MAX;
            c(3.978, 10.70 * since_fit, 3.042 * since_fit, 2)
        }
        (Variant::Wgmma, 128) => c(6.256, 15.63 * WGMMA_LEAN, 3.663 * WGMMA_LEAN, 1),
        (Variant::Split, 64) => c(1.622, 6.192, 3.310, 2),
        (Variant::Split, 128) => c(1.449, 11.03, 1.804, 2),
        (Variant::SplitWg, 64) => c(1.415, 9.174, 1.716, 2),
        (Variant::SplitWg, 128) => c(1.266, 12.33, 2.089, 1),
        (Variant::SplitN64, 64) => c(1.418, 4.424, 4.956, 1),
        (Variant::SplitN64, 128) => c(1.350, 8.752, 2.218, 2),
        _ => None,
    }
}

/// The rounds of the busiest SM, weighted by how many blocks share each:
/// `blocks` over `multiprocessors` SMs that run `per_sm` at once.
pub fn load(blocks: u64, multiprocessors: u32, per_sm: u32) -> f32 {
    let on_busiest = blocks.div_ceil(multiprocessors.max(1) as u64);
    let per_sm = per_sm.max(1) as u64;
    let round = |n: u64| 1.0 + TWO_BLOCKS_COST * (n as f32 - 1.0);
    let (full, rest) = (on_busiest / per_sm, on_busiest % per_sm);
    full as f32 * round(per_sm) + if rest > 0 { round(rest) } else { 0.0 }
}

/// The model's time per call of `variant` on `w` with `multiprocessors`
/// SMs, or `None` where it has no fit (other variants, other head dims).
pub fn predicted_us(w: &Workload, variant: Variant, multiprocessors: u32) -> Option<f32> {
    let c = cost(variant, w.head_dim)?;
    let blocks = w.blocks(find(variant, w.head_dim)?.tiles.block_m);
    let keys = w.seq_kv as f32 * load(blocks, multiprocessors, c.blocks_per_sm);
    let elements = w.batch as f32 * w.heads_q as f32 * w.seq_kv as f32 * w.head_dim as f32;
    Some(c.fixed_us + c.per_kilokey_us * keys / 1e3 + c.per_mega_element_us * elements / 1e6)
}
