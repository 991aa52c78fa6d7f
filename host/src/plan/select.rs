//! Kernel selection: which row of the kernel table runs a variant on a
//! problem. Most variants have one kernel per head dimension and output
//! type; two have a second one that is faster on some problems.

use kernels_gpu::kernels::{KERNELS, KernelInfo, WGMMA_FP8PV_LONG_D128, find};
use kernels_gpu::variant::{OutputDtype, Variant};

use crate::error::AttnError;
use crate::options::Layout;

/// Keys from which [`select`] runs `wgmma-fp8pv` at D = 128 as
/// [`WGMMA_FP8PV_LONG_D128`], on problems that are not causal. Against the
/// three-warpgroup kernel, both with a producer warpgroup and K by tensor
/// copies, on the H200: 0.99-1.01x the time at 8192-16384 keys, but
/// 1.04-1.07x at 2048-4096; causal, where every 128-row query block has
/// its own partial first key block and a diagonal one, 1.02-1.03x at
/// 16384-32768 keys, so causal problems never take it (see lab/).
pub const FP8PV_LONG_MIN_KEYS: u32 = 8192;

/// The key lengths at which `split-n64` D = 64 runs its pair-row kernel
/// (`sdpa_split_n64_pairs_d64`, [`KernelInfo::pair_rows`]) where it runs
/// (even query and key lengths, [`KernelInfo::runs_on`]): from 257 keys,
/// where some group has two key blocks in flight, to 512, the last length
/// whose key blocks are all in flight at once (4 groups x 2 stages x 64
/// keys). On the H200 against the plain kernel: 0.97-0.99x the time at
/// 384-512 keys, about even at 256, 1.02-1.03x at 1024-2048, where groups
/// refill their stages.
pub const SPLIT_N64_PAIRS_KEYS: core::ops::RangeInclusive<u32> = 257..=512;

/// The kernel that runs `variant` on a problem of `head_dim`, `seq_q`
/// queries, `seq_kv` keys and `causal` masking: [`find`]'s, except
/// - `wgmma-fp8pv` at D = 128 on problems of at least
///   [`FP8PV_LONG_MIN_KEYS`] keys that are not causal, which take its
///   192-key kernel ([`WGMMA_FP8PV_LONG_D128`]);
/// - a variant with a pair-row kernel at `head_dim` (`split-n64` at
///   D = 64), which takes it where it runs ([`KernelInfo::runs_on`]) and
///   the keys are in [`SPLIT_N64_PAIRS_KEYS`];
///
/// each in its twin that writes `output`. `None` where the variant has no
/// kernel at `head_dim`.
pub fn select(
    variant: Variant,
    head_dim: u32,
    seq_q: u32,
    seq_kv: u32,
    causal: bool,
    output: OutputDtype,
) -> Option<&'static KernelInfo> {
    let long = variant == Variant::WgmmaFp8Pv && head_dim == 128 && !causal && seq_kv >= FP8PV_LONG_MIN_KEYS;
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

/// The error for `variant`, whose kernels have no packed twin, on a packed
/// batch (`layout` `Bhsd`, its own) or on `[B, S, H, D]` tensors.
pub fn without_packed_twin(variant: Variant, layout: Layout) -> AttnError {
    let runs_on = "the `wgmma` and `wgmma-fp8pv` variants (sm_90a)";
    match layout {
        Layout::Bhsd => AttnError::VariantUnavailable {
            variant: variant.name(),
            reason: format!("packed batches of sequences run on {runs_on} only"),
        },
        Layout::Bshd => AttnError::LayoutUnavailable {
            layout: layout.name(),
            reason: format!("{} does not read it; [B, S, H, D] tensors run on {runs_on}", variant.name()),
        },
    }
}

/// The kernel that runs `variant` on a packed batch, or on `[B, S, H, D]`
/// tensors (`layout`), at `head_dim`, in its twin that writes `output`:
/// [`find`]'s, which must have a packed twin (`KernelInfo::packed`: the
/// `wgmma` variants'); `Ok(None)` where the variant has no kernel at
/// `head_dim`.
pub fn packed(
    variant: Variant,
    head_dim: u32,
    output: OutputDtype,
    layout: Layout,
) -> Result<Option<&'static KernelInfo>, AttnError> {
    let Some(kernel) = find(variant, head_dim).map(|k| k.writing(output)) else {
        return Ok(None);
    };
    if kernel.packed.is_none() {
        return Err(without_packed_twin(variant, layout));
    }
    Ok(Some(kernel))
}
