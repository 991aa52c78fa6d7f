//! A cost model of each sm_90a kernel's time per call, fitted on H100
//! measurements, by which [`crate::kernels::recommended`] picks among the
//! variants for problems of [`MODEL_MIN_KEYS`] to [`MODEL_MAX_KEYS`] keys.
//!
//! A kernel's blocks are spread over the SMs; the busiest SM holds `L =
//! ceil(blocks / SMs)` of them and runs up to `blocks_per_sm` at once. Its
//! time is taken as rounds of concurrent blocks, each round as long as one
//! block's key loop times `1 + TWO_BLOCKS_COST x (concurrent - 1)` (two
//! blocks on an SM take 1.44x one: results/STAGES.md stage 69). With that
//! `load`, the model is
//!
//! ```text
//! time_us = fixed_us + per_key_us x keys x load + per_element_us x K/V elements / 1e6
//! ```
//!
//! where `keys` is `seq_kv` and, under causal masking, the blocks count half
//! (the work is half, each block's keys from none to all). The last term
//! stands for what grows with the inputs (the `wgmma` prepass, bytes
//! through L2). The coefficients are a least-squares fit (relative error,
//! `scripts/fit-cost.py`, which reproduces every one of them) of every
//! variant at 121 shapes of 128-2048 keys on the H100 (runs 116, 117 and
//! 120, `results/`); at 116 of them the fastest predicted variant is the
//! fastest measured or within 2%, and each run left out of the fit and
//! predicted by the other two gave 76 / 79, 22 / 22 and 17 / 20.
//! `split-n64`'s are fitted on H100 runs 160 (D = 64: run 133's 44 shapes
//! of 128-2048 keys, re-timed after stages 90b, 91 and 95; runs 124 and 133
//! had them before) and 126 (D = 128, 38 shapes), which timed it beside
//! every other variant. `wgmma`'s per-key and per-element coefficients are
//! then scaled by [`WGMMA_LEAN`] for stage 125r, which made its key loop
//! faster after the fit, and at D = 64 by [`WGMMA_D64_ROW_SUMS_AND_FAST_MAX`]
//! for stages 135 and 138. With them, the model's pick is right at 212 of
//! the 221 shapes timed so far (runs 116-214, each from its latest run;
//! see `recommended`).

use crate::kernels::{Variant, Workload, find};

/// Keys up to which [`crate::kernels::recommended`] trusts the model: the
/// longest measured.
pub const MODEL_MAX_KEYS: u32 = 2048;

/// Keys from which [`crate::kernels::recommended`] trusts the model: the
/// shortest fitted (shorter problems are one key block of every kernel).
pub const MODEL_MIN_KEYS: u32 = 128;

/// `wgmma`'s time per key and per element after stage 125r relative to the
/// build its coefficients were fitted on (runs 116-120): its lean key loop
/// measured 0.984 of the old one (geometric mean of six long shapes, H200
/// run 190) and 0.963-0.989 at the H100 record's eight shapes (run 197,
/// against record -15 on another H100).
/// Scaling by it makes the pick right at 214 of the 221 shapes of runs
/// 116-160 (212 without it) and at 30 of run 198's 35 shapes near
/// `wgmma`'s boundary (27 without it; results/2026-11-26-predictions-run197.md).
pub const WGMMA_LEAN: f32 = 0.98;

/// `wgmma` D = 64's time per key and per element after stages 135 (row sums
/// on the tensor cores) and 138 (the lazy maxima's fast path) relative to
/// the lean build: their A/B runs measured 0.93-0.96 at 512-2048 keys and
/// 0.91-0.93 on the long rows (H100 runs 208 and 211). With it the pick is
/// right at 212 of the 221 shapes (205 without) and at 34 of run 212's 35
/// shapes near `wgmma`'s boundary (25 without). D = 128 gained 2.5-9% too,
/// but scaling its terms as well (0.96-0.98) scored 211 and 212: it
/// stays (results/2026-11-26-predictions-run212.md).
pub const WGMMA_D64_ROW_SUMS_AND_FAST_MAX: f32 = 0.92;

/// How much longer a round takes per extra block running beside the first
/// on an SM: 0.44 (results/STAGES.md stage 69, `split` at 128 vs 256 blocks).
pub const TWO_BLOCKS_COST: f32 = 0.44;

/// The variants the model has fitted, in table order: those
/// [`crate::kernels::recommended`] chooses among and `sdpa plan` shows.
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
