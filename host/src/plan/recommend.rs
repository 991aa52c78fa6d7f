//! The recommendation: which variant runs a problem when the caller leaves
//! the choice to the library ([`crate::VariantChoice::Auto`]).

use super::cost::{MODEL_MAX_KEYS, MODEL_MIN_KEYS, MODELLED, predicted_us};
use super::target::Target;
use super::workload::Workload;
use kernels_gpu::variant::Variant;

/// Longest key length for which [`recommended`] picks the split family on
/// sm_90a past the cost model's keys, counted as [`Workload::split_keys`]
/// (halved under causal masking): 2048 at D = 64, 1024 at D = 128. On the
/// H200, where `wgmma` fills few SMs, `split` wins at (1,4,2048,64), causal
/// (1,8,2048,64) and causal (1,8,2048,128) (1024 keys a block on average),
/// and loses at (1,6,1536,128).
pub const fn split_max_keys(head_dim: u32) -> u32 {
    if head_dim >= 128 { 1024 } else { 2048 }
}

/// Query lengths up to which [`recommended`] treats a problem of at least
/// [`DECODE_MIN_KEYS`] keys as decoding: the prefill kernels' 64- to
/// 192-row blocks would each walk the whole cache with one or a few live
/// rows.
pub use kernels_gpu::record::DECODE_MAX_QUERIES;

/// Keys from which [`recommended`] picks `decode` for problems of
/// at most [`DECODE_MAX_QUERIES`] queries: it folds the query heads of a
/// key/value head into one block's rows and splits the keys across
/// blocks where the folded heads alone leave SMs idle.
pub const DECODE_MIN_KEYS: u32 = 1024;

/// Key lengths up to which [`recommended`] picks `split` off sm_90a, where
/// no crossover has been measured.
pub const SHORT_KEYS: u32 = 1024;

/// How much of the GPU, in fifths of its SMs, `wgmma` must be able to fill
/// ([`Workload::wgmma_blocks`]) before [`recommended`] prefers it to the
/// split family at head dimension `head_dim`: 3/5 at D = 64, 2/5 at
/// D = 128, where `split` has only two key groups per block. On the H200:
/// at D = 64 `split` wins at 64 `wgmma` blocks by 3-25% and `wgmma` at 96;
/// at D = 128 `split` wins at 44-48 blocks and `wgmma` at 64.
pub const fn split_fill_fifths(head_dim: u32) -> u64 {
    if head_dim >= 128 { 2 } else { 3 }
}

/// Whether `split-wg`'s 64-row blocks ([`Workload::split_wg_blocks`]) fill
/// at least two thirds of the GPU's `multiprocessors`: there it beats
/// `split`, whose 32-row blocks take twice the chains of each 64 rows (on
/// the H100 0.78-0.96x `split`'s time at 96-256 blocks, 1.08-1.29x at 64).
pub const fn split_wg_fills(blocks: u64, multiprocessors: u32) -> bool {
    3 * blocks >= 2 * multiprocessors as u64
}

/// The variant the library recommends for a problem on `target`.
///
/// On sm_90a, from [`MODEL_MIN_KEYS`] to [`MODEL_MAX_KEYS`] keys: the
/// variant whose time the cost model ([`predicted_us`]) predicts lowest
/// among [`MODELLED`]. On the shapes the H100 has timed every variant on
/// (`host/tests/plan.rs`), it picks the fastest or one within 2% at all
/// but a few, the misses causal problems of long keys for the most part.
///
/// Shorter and longer problems take a rule. The split family's member is
/// `split-wg` where its 64-row blocks fill the GPU ([`split_wg_fills`]),
/// else `split`. Below [`MODEL_MIN_KEYS`] keys, that member. Past
/// [`MODEL_MAX_KEYS`], that member when a query block sees at most
/// [`split_max_keys`] keys ([`Workload::split_keys`]) and `wgmma` would
/// fill less of the GPU than [`split_fill_fifths`] says
/// ([`Workload::wgmma_blocks`]), since it shares each query block's keys
/// among groups of warps and so shortens each block's chain where there
/// are few blocks; else `wgmma`.
///
/// Elsewhere (no crossover measured): `split` up to [`SHORT_KEYS`] keys,
/// else `mma`.
///
/// Before all of these, on every target, decoding (at most
/// [`DECODE_MAX_QUERIES`] queries, at least [`DECODE_MIN_KEYS`] keys):
/// `decode`. The sm_89 image's `decode`, timed on an H200, ran 9-15x
/// faster than its `mma` and 5-7x faster than its `split` at one query
/// row, 3.3x and 1.8x at 16 (lab/).
pub fn recommended(w: &Workload, target: Target) -> Variant {
    let multiprocessors = target.multiprocessors;
    if w.seq_q <= DECODE_MAX_QUERIES && w.seq_kv >= DECODE_MIN_KEYS {
        return Variant::Decode;
    }
    if !target.sm90a {
        return if w.seq_kv <= SHORT_KEYS { Variant::Split } else { Variant::Mma };
    }
    let family = if split_wg_fills(w.split_wg_blocks(), multiprocessors) { Variant::SplitWg } else { Variant::Split };
    if w.seq_kv < MODEL_MIN_KEYS {
        return family;
    }
    if w.seq_kv <= MODEL_MAX_KEYS {
        let time = |v: Variant| predicted_us(w, v, multiprocessors).unwrap_or(f32::INFINITY);
        return MODELLED.into_iter().fold(Variant::Split, |best, v| if time(v) < time(best) { v } else { best });
    }
    let few_blocks = 5 * w.wgmma_blocks() < split_fill_fifths(w.head_dim) * multiprocessors as u64;
    if w.split_keys() <= split_max_keys(w.head_dim) && few_blocks { family } else { Variant::Wgmma }
}
