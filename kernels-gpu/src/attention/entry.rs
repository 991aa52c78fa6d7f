//! PTX entry points: one monomorphic `extern "ptx-kernel"` function per row
//! of [`crate::kernels::KERNELS`], its tile constants taken from that table.
//! `entry!` emits a kernel's two entries, `name` storing f16 and
//! `name_bf16` bf16 ([`super::output`]), or a prepass's one.

use super::block::{Rolled, Unrolled};
use super::decode::{self, Decode};
use super::merge::InTiles;
use super::mma;
use super::output::{Bf16, F16, OutputFormat};
use super::split::{self, PlanRows, WarpMma};
use super::walk::{CappedKeys, FullRows, WindowRows, WindowedKeys};
use crate::kernels::{DECODE_D64, DECODE_D128, MMA_D64, MMA_D128, SPLIT_D64, SPLIT_D128};
use crate::params::AttnParams;
use crate::tiles::TileShape;
#[cfg(target_feature = "sm_90a")]
use {
    super::block::{Dense, Packed, Sequences},
    super::merge::Apart,
    super::online::{FusedFma, Unfused},
    super::prepass,
    super::split::{PairRows, WarpgroupWgmma},
    super::wgmma::{self, CausalKeys, PvE4M3, PvF16, PvForm, ScorePolicy, TanhCap, Uncapped, WindowKeys, specialized},
    crate::kernels::{
        SPLIT_N64_D64, SPLIT_N64_D64_EXCHANGE_APART, SPLIT_N64_D128, SPLIT_WG_D64, SPLIT_WG_D128, WGMMA_D64,
        WGMMA_D128, WGMMA_FP8PV_LONG_D128,
    },
};

/// Emits PTX entry points that run `$body` with the launch's parameters
/// bound to `$p`: `f16 / bf16` emits both, with the type `Out` the entry's
/// output format (`F16`, `Bf16`) for the body to pass on; a lone name emits
/// one.
macro_rules! entry {
    ($f16:ident / $bf16:ident, |$p:ident| $body:expr) => {
        entry!(@one $f16, F16, |$p| $body);
        entry!(@one $bf16, Bf16, |$p| $body);
    };
    ($name:ident, |$p:ident| $body:expr) => {
        /// PTX entry point of a prepass (see `kernels::Prepass`).
        ///
        /// # Safety
        /// Launched by the host with validated parameters and the prepass geometry.
        #[unsafe(no_mangle)]
        pub unsafe extern "ptx-kernel" fn $name($p: AttnParams) {
            // SAFETY: forwarded launch contract.
            unsafe { $body }
        }
    };
    (@one $name:ident, $out:ty, |$p:ident| $body:expr) => {
        /// PTX entry point (see `kernels::KERNELS`).
        ///
        /// # Safety
        /// Launched by the host with validated parameters and the geometry of `kernels::KERNELS`.
        #[unsafe(no_mangle)]
        pub unsafe extern "ptx-kernel" fn $name($p: AttnParams) {
            /// The entry's output format.
            type Out = $out;
            // SAFETY: forwarded launch contract.
            unsafe { $body }
        }
    };
}

/// Emits a kernel's score twins (`kernels::ScoreTwins`): `window /
/// window_bf16` runs `$call!(p, $args.., $walk<WindowedKeys>)`, a key
/// window, and `softcap / softcap_bf16` the same with `$walk<CappedKeys>`,
/// a window and capped scores.
macro_rules! score_twins {
    (
        $window:ident / $window_bf16:ident,
        $softcap:ident / $softcap_bf16:ident,
        $call:ident!($($args:tt)*),
        $walk:ident
    ) => {
        entry!($window / $window_bf16, |p| $call!(p, $($args)*, $walk<WindowedKeys>));
        entry!($softcap / $softcap_bf16, |p| $call!(p, $($args)*, $walk<CappedKeys>));
    };
}

/// `wgmma::forward` with the fused or the unfused exponent, as the block's
/// own score factor allows (`softmax::fused_exponent_ok`): one monomorph of
/// each, chosen per block from the scales it reads, so no host check of
/// scale values is needed.
///
/// # Safety
/// As `wgmma::forward`.
#[cfg(target_feature = "sm_90a")]
#[inline(always)]
unsafe fn wgmma_forward<
    const HEAD_DIM: usize,
    const WARPGROUPS: usize,
    const BLOCK_N: usize,
    const S_TILES: usize,
    const STAGES: usize,
    const QK_STEPS: usize,
    const O_TILES: usize,
    const SOFTMAX_CHAINS: usize,
    const PV_STEPS: usize,
    Pv: PvForm,
    Seqs: Sequences,
    Sc: ScorePolicy,
    Out: OutputFormat,
>(
    p: &AttnParams,
) {
    // SAFETY: forwarded (host-validated parameters).
    unsafe {
        let block_m = 64 * WARPGROUPS as u32;
        let mut job = Seqs::job::<HEAD_DIM>(p, block_m);
        Sc::limit_keys(p, &mut job, block_m);
        // The body with exponent policy `$exponent`, the other parameters this entry's.
        macro_rules! forward_with {
            ($exponent:ty) => {
                wgmma::forward::<
                    HEAD_DIM,
                    WARPGROUPS,
                    BLOCK_N,
                    S_TILES,
                    STAGES,
                    QK_STEPS,
                    O_TILES,
                    SOFTMAX_CHAINS,
                    $exponent,
                    PV_STEPS,
                    Pv,
                    Sc,
                    Out,
                >(p, job)
            };
        }
        if Sc::fused_exponent_ok(p, &job, HEAD_DIM as u32) { forward_with!(FusedFma) } else { forward_with!(Unfused) }
    }
}

/// `wgmma::specialized::forward` for tile shape `$t`, `$chains` softmax
/// chains, P·V form `$pv`, the sequences' layout (`Dense` unless given)
/// and the score policy (`CausalKeys` unless given), with the fused or the
/// unfused exponent as the block's score factor allows (as
/// [`wgmma_forward`]).
#[cfg(target_feature = "sm_90a")]
macro_rules! wgmma_specialized_call {
    ($p:ident, $t:expr, chains: $chains:literal, $pv:ty) => {
        wgmma_specialized_call!($p, $t, chains: $chains, $pv, Dense)
    };
    ($p:ident, $t:expr, chains: $chains:literal, $pv:ty, $seqs:ty) => {
        wgmma_specialized_call!($p, $t, chains: $chains, $pv, $seqs, CausalKeys)
    };
    ($p:ident, $t:expr, chains: $chains:literal, $pv:ty, $seqs:ty, $scores:ty) => {{
        const T: TileShape = $t;
        let block_m = T.block_m;
        let mut job = <$seqs>::job::<{ T.head_dim as usize }>(&$p, block_m);
        <$scores>::limit_keys(&$p, &mut job, block_m);
        // The body with exponent policy `$exponent`.
        macro_rules! forward_with {
            ($exponent:ty) => {
                specialized::forward::<
                    { T.head_dim as usize },
                    { T.warps as usize / 4 },
                    { T.block_n as usize },
                    { T.block_n as usize / 8 },
                    { T.stages as usize },
                    { T.head_dim as usize / 32 },
                    { T.head_dim as usize / 8 },
                    $chains,
                    $exponent,
                    { T.block_n as usize / <$pv>::KEYS_PER_PRODUCT },
                    $pv,
                    $scores,
                    Out,
                >(&$p, job)
            };
        }
        if <$scores>::fused_exponent_ok(&$p, &job, T.head_dim) {
            forward_with!(FusedFma)
        } else {
            forward_with!(Unfused)
        }
    }};
}

/// The call of `mma::forward` for tile shape `$t`, copy loop `$copies`
/// and walk `$walk` (prefill's [`FullRows`] unless given), its derived
/// constants spelled out once (inside an `entry!` body, where `Out` is the
/// entry's output format).
macro_rules! mma_call {
    ($p:ident, $t:expr, $copies:ty) => {
        mma_call!($p, $t, $copies, FullRows)
    };
    ($p:ident, $t:expr, $copies:ty, $walk:ty) => {{
        const T: TileShape = $t;
        mma::forward::<
            { T.head_dim as usize },
            { T.block_n as usize },
            { T.stages as usize },
            { T.warps as usize },
            { T.head_dim as usize / 32 },
            { T.head_dim as usize / 8 },
            { T.block_n as usize / 8 },
            $copies,
            $walk,
            Out,
        >(&$p)
    }};
}

/// The call of `split::forward` for tile shape `$t`, `$chains` softmax
/// chains and its policies (where the merge's exchange lies, how the tile
/// rows lie, how Q·K^T is multiplied, the key walk: prefill's
/// [`FullRows`] unless given).
macro_rules! split_call {
    ($p:ident, $t:expr, chains: $chains:literal, $exchange:ty, $rows:ty, $scores:ty) => {
        split_call!($p, $t, chains: $chains, $exchange, $rows, $scores, FullRows)
    };
    ($p:ident, $t:expr, chains: $chains:literal, $exchange:ty, $rows:ty, $scores:ty, $walk:ty) => {{
        const T: TileShape = $t;
        split::forward::<
            { T.head_dim as usize },
            { T.block_n as usize },
            { T.stages as usize },
            { T.block_m as usize / 16 },
            { T.splits as usize },
            { T.head_dim as usize / 32 },
            { T.head_dim as usize / 8 },
            { T.block_n as usize / 8 },
            { T.head_dim as usize / 8 / T.splits as usize },
            $chains,
            $exchange,
            $rows,
            $scores,
            $walk,
            Out,
        >(&$p)
    }};
}

/// The call of [`wgmma_forward`] for tile shape `$t`, `$chains` softmax
/// chains, P·V form `$pv`, the sequences' layout (`Dense` unless given)
/// and the score policy (`CausalKeys` unless given).
#[cfg(target_feature = "sm_90a")]
macro_rules! wgmma_call {
    ($p:ident, $t:expr, chains: $chains:literal, $pv:ty) => {
        wgmma_call!($p, $t, chains: $chains, $pv, Dense)
    };
    ($p:ident, $t:expr, chains: $chains:literal, $pv:ty, $seqs:ty) => {
        wgmma_call!($p, $t, chains: $chains, $pv, $seqs, CausalKeys)
    };
    ($p:ident, $t:expr, chains: $chains:literal, $pv:ty, $seqs:ty, $scores:ty) => {{
        const T: TileShape = $t;
        wgmma_forward::<
            { T.head_dim as usize },
            { T.warps as usize / 4 },
            { T.block_n as usize },
            { T.block_n as usize / 8 },
            { T.stages as usize },
            { T.head_dim as usize / 32 },
            { T.head_dim as usize / 8 },
            $chains,
            { T.block_n as usize / <$pv>::KEYS_PER_PRODUCT },
            $pv,
            $seqs,
            $scores,
            Out,
        >(&$p)
    }};
}

// `mma`: unrolled copies ([`Unrolled`]) measured faster at D = 128 and
// slower at D = 64 (see lab/).
entry!(sdpa_mma_d64 / sdpa_mma_d64_bf16, |p| mma_call!(p, MMA_D64, Rolled));
entry!(sdpa_mma_d128 / sdpa_mma_d128_bf16, |p| mma_call!(p, MMA_D128, Unrolled));
// Their twins with a key window, and with a window and capped scores.
score_twins!(
    sdpa_mma_window_d64 / sdpa_mma_window_d64_bf16,
    sdpa_mma_softcap_d64 / sdpa_mma_softcap_d64_bf16,
    mma_call!(MMA_D64, Rolled),
    WindowRows
);
score_twins!(
    sdpa_mma_window_d128 / sdpa_mma_window_d128_bf16,
    sdpa_mma_softcap_d128 / sdpa_mma_softcap_d128_bf16,
    mma_call!(MMA_D128, Unrolled),
    WindowRows
);

entry!(sdpa_split_d64 / sdpa_split_d64_bf16, |p| split_call!(p, SPLIT_D64, chains: 1, InTiles, PlanRows, WarpMma));
entry!(sdpa_split_d128 / sdpa_split_d128_bf16, |p| split_call!(p, SPLIT_D128, chains: 1, InTiles, PlanRows, WarpMma));
// Its twins with a key window, and with a window and capped scores.
score_twins!(
    sdpa_split_window_d64 / sdpa_split_window_d64_bf16,
    sdpa_split_softcap_d64 / sdpa_split_softcap_d64_bf16,
    split_call!(SPLIT_D64, chains: 1, InTiles, PlanRows, WarpMma),
    WindowRows
);
score_twins!(
    sdpa_split_window_d128 / sdpa_split_window_d128_bf16,
    sdpa_split_softcap_d128 / sdpa_split_softcap_d128_bf16,
    split_call!(SPLIT_D128, chains: 1, InTiles, PlanRows, WarpMma),
    WindowRows
);
// `decode`: one row warp of folded query heads, four key groups, keys
// split across blocks; then, where they were split, the merge.
entry!(sdpa_decode_d64 / sdpa_decode_d64_bf16, |p| {
    split_call!(p, DECODE_D64, chains: 1, InTiles, PlanRows, WarpMma, Decode)
});
entry!(sdpa_decode_d128 / sdpa_decode_d128_bf16, |p| {
    split_call!(p, DECODE_D128, chains: 1, InTiles, PlanRows, WarpMma, Decode)
});
// Its twins with a key window, and with a window and capped scores.
score_twins!(
    sdpa_decode_window_d64 / sdpa_decode_window_d64_bf16,
    sdpa_decode_softcap_d64 / sdpa_decode_softcap_d64_bf16,
    split_call!(DECODE_D64, chains: 1, InTiles, PlanRows, WarpMma),
    Decode
);
score_twins!(
    sdpa_decode_window_d128 / sdpa_decode_window_d128_bf16,
    sdpa_decode_softcap_d128 / sdpa_decode_softcap_d128_bf16,
    split_call!(DECODE_D128, chains: 1, InTiles, PlanRows, WarpMma),
    Decode
);
entry!(sdpa_decode_merge_d64 / sdpa_decode_merge_d64_bf16, |p| decode::merge_splits::<64, 2, Out>(&p));
entry!(sdpa_decode_merge_d128 / sdpa_decode_merge_d128_bf16, |p| decode::merge_splits::<128, 4, Out>(&p));
// `split-wg`: each key group a warpgroup whose Q·K^T is one `wgmma`.
#[cfg(target_feature = "sm_90a")]
entry!(sdpa_split_wg_d64 / sdpa_split_wg_d64_bf16, |p| {
    split_call!(p, SPLIT_WG_D64, chains: 1, InTiles, PlanRows, WarpgroupWgmma)
});
#[cfg(target_feature = "sm_90a")]
entry!(sdpa_split_wg_d128 / sdpa_split_wg_d128_bf16, |p| {
    split_call!(p, SPLIT_WG_D128, chains: 1, InTiles, PlanRows, WarpgroupWgmma)
});
// `split-n64` at D = 64: four softmax chains (spelled out, see
// `split::forward`) and the exchange apart measured faster; four chains
// measured slower for `split` and for `split-n64` at D = 128 (see lab/).
#[cfg(target_feature = "sm_90a")]
entry!(sdpa_split_n64_d64 / sdpa_split_n64_d64_bf16, |p| {
    split_call!(p, SPLIT_N64_D64, chains: 4, Apart, PlanRows, WarpMma)
});
// (`kernels` sizes its shared memory with the exchange apart.)
#[cfg(target_feature = "sm_90a")]
const _: () = assert!(SPLIT_N64_D64_EXCHANGE_APART);
// The same with Q, K and V copied as 128-byte pair rows, for even lengths
// (the host's `plan::select` picks it).
#[cfg(target_feature = "sm_90a")]
entry!(sdpa_split_n64_pairs_d64 / sdpa_split_n64_pairs_d64_bf16, |p| {
    split_call!(p, SPLIT_N64_D64, chains: 4, Apart, PairRows, WarpMma)
});
#[cfg(target_feature = "sm_90a")]
entry!(sdpa_split_n64_d128 / sdpa_split_n64_d128_bf16, |p| {
    split_call!(p, SPLIT_N64_D128, chains: 1, InTiles, PlanRows, WarpMma)
});
// Their twins with a key window, and with a window and capped scores
// (the plain rows, not the pair rows).
#[cfg(target_feature = "sm_90a")]
score_twins!(
    sdpa_split_n64_window_d64 / sdpa_split_n64_window_d64_bf16,
    sdpa_split_n64_softcap_d64 / sdpa_split_n64_softcap_d64_bf16,
    split_call!(SPLIT_N64_D64, chains: 4, Apart, PlanRows, WarpMma),
    WindowRows
);
#[cfg(target_feature = "sm_90a")]
score_twins!(
    sdpa_split_n64_window_d128 / sdpa_split_n64_window_d128_bf16,
    sdpa_split_n64_softcap_d128 / sdpa_split_n64_softcap_d128_bf16,
    split_call!(SPLIT_N64_D128, chains: 1, InTiles, PlanRows, WarpMma),
    WindowRows
);

// `wgmma`: the softmax's row maximum and sum as four chains
// (`online::fold_row`) measured faster at D = 128 and slower at D = 64,
// where two blocks per SM hide the longer chain (see lab/).
#[cfg(target_feature = "sm_90a")]
entry!(sdpa_wgmma_d64 / sdpa_wgmma_d64_bf16, |p| wgmma_call!(p, WGMMA_D64, chains: 1, PvF16));
#[cfg(target_feature = "sm_90a")]
entry!(sdpa_wgmma_d128 / sdpa_wgmma_d128_bf16, |p| wgmma_specialized_call!(p, WGMMA_D128, chains: 4, PvF16));
// `wgmma-fp8pv` (opt-in): P·V on E4M3 operands.
#[cfg(target_feature = "sm_90a")]
entry!(sdpa_wgmma_fp8pv_d64 / sdpa_wgmma_fp8pv_d64_bf16, |p| wgmma_call!(p, WGMMA_D64, chains: 1, PvE4M3));
#[cfg(target_feature = "sm_90a")]
entry!(sdpa_wgmma_fp8pv_d128 / sdpa_wgmma_fp8pv_d128_bf16, |p| {
    wgmma_specialized_call!(p, WGMMA_D128, chains: 4, PvE4M3)
});
// Their twins over packed batches of sequences (`kernels::KernelInfo::packed`).
#[cfg(target_feature = "sm_90a")]
entry!(sdpa_wgmma_packed_d64 / sdpa_wgmma_packed_d64_bf16, |p| wgmma_call!(p, WGMMA_D64, chains: 1, PvF16, Packed));
#[cfg(target_feature = "sm_90a")]
entry!(sdpa_wgmma_packed_d128 / sdpa_wgmma_packed_d128_bf16, |p| {
    wgmma_specialized_call!(p, WGMMA_D128, chains: 4, PvF16, Packed)
});
#[cfg(target_feature = "sm_90a")]
entry!(sdpa_wgmma_fp8pv_packed_d64 / sdpa_wgmma_fp8pv_packed_d64_bf16, |p| {
    wgmma_call!(p, WGMMA_D64, chains: 1, PvE4M3, Packed)
});
#[cfg(target_feature = "sm_90a")]
entry!(sdpa_wgmma_fp8pv_packed_d128 / sdpa_wgmma_fp8pv_packed_d128_bf16, |p| {
    wgmma_specialized_call!(p, WGMMA_D128, chains: 4, PvE4M3, Packed)
});
// Its 192-key form for long rows (the host's `plan::select` picks it),
// warp-specialized.
#[cfg(target_feature = "sm_90a")]
entry!(sdpa_wgmma_fp8pv_long_d128 / sdpa_wgmma_fp8pv_long_d128_bf16, |p| {
    wgmma_specialized_call!(p, WGMMA_FP8PV_LONG_D128, chains: 4, PvE4M3)
});

// Their twins with a key window (`kernels::ScoreTwins`; causal masking is
// the window the host folds it into), and with a window and capped scores.
#[cfg(target_feature = "sm_90a")]
entry!(sdpa_wgmma_window_d64 / sdpa_wgmma_window_d64_bf16, |p| {
    wgmma_call!(p, WGMMA_D64, chains: 1, PvF16, Dense, WindowKeys<Uncapped>)
});
#[cfg(target_feature = "sm_90a")]
entry!(sdpa_wgmma_window_d128 / sdpa_wgmma_window_d128_bf16, |p| {
    wgmma_specialized_call!(p, WGMMA_D128, chains: 4, PvF16, Dense, WindowKeys<Uncapped>)
});
#[cfg(target_feature = "sm_90a")]
entry!(sdpa_wgmma_fp8pv_window_d64 / sdpa_wgmma_fp8pv_window_d64_bf16, |p| {
    wgmma_call!(p, WGMMA_D64, chains: 1, PvE4M3, Dense, WindowKeys<Uncapped>)
});
#[cfg(target_feature = "sm_90a")]
entry!(sdpa_wgmma_fp8pv_window_d128 / sdpa_wgmma_fp8pv_window_d128_bf16, |p| {
    wgmma_specialized_call!(p, WGMMA_D128, chains: 4, PvE4M3, Dense, WindowKeys<Uncapped>)
});
#[cfg(target_feature = "sm_90a")]
entry!(sdpa_wgmma_packed_window_d64 / sdpa_wgmma_packed_window_d64_bf16, |p| {
    wgmma_call!(p, WGMMA_D64, chains: 1, PvF16, Packed, WindowKeys<Uncapped>)
});
#[cfg(target_feature = "sm_90a")]
entry!(sdpa_wgmma_packed_window_d128 / sdpa_wgmma_packed_window_d128_bf16, |p| {
    wgmma_specialized_call!(p, WGMMA_D128, chains: 4, PvF16, Packed, WindowKeys<Uncapped>)
});
#[cfg(target_feature = "sm_90a")]
entry!(sdpa_wgmma_fp8pv_packed_window_d64 / sdpa_wgmma_fp8pv_packed_window_d64_bf16, |p| {
    wgmma_call!(p, WGMMA_D64, chains: 1, PvE4M3, Packed, WindowKeys<Uncapped>)
});
#[cfg(target_feature = "sm_90a")]
entry!(sdpa_wgmma_fp8pv_packed_window_d128 / sdpa_wgmma_fp8pv_packed_window_d128_bf16, |p| {
    wgmma_specialized_call!(p, WGMMA_D128, chains: 4, PvE4M3, Packed, WindowKeys<Uncapped>)
});
#[cfg(target_feature = "sm_90a")]
entry!(sdpa_wgmma_softcap_d64 / sdpa_wgmma_softcap_d64_bf16, |p| {
    wgmma_call!(p, WGMMA_D64, chains: 1, PvF16, Dense, WindowKeys<TanhCap>)
});
#[cfg(target_feature = "sm_90a")]
entry!(sdpa_wgmma_softcap_d128 / sdpa_wgmma_softcap_d128_bf16, |p| {
    wgmma_specialized_call!(p, WGMMA_D128, chains: 4, PvF16, Dense, WindowKeys<TanhCap>)
});
#[cfg(target_feature = "sm_90a")]
entry!(sdpa_wgmma_fp8pv_softcap_d64 / sdpa_wgmma_fp8pv_softcap_d64_bf16, |p| {
    wgmma_call!(p, WGMMA_D64, chains: 1, PvE4M3, Dense, WindowKeys<TanhCap>)
});
#[cfg(target_feature = "sm_90a")]
entry!(sdpa_wgmma_fp8pv_softcap_d128 / sdpa_wgmma_fp8pv_softcap_d128_bf16, |p| {
    wgmma_specialized_call!(p, WGMMA_D128, chains: 4, PvE4M3, Dense, WindowKeys<TanhCap>)
});
#[cfg(target_feature = "sm_90a")]
entry!(sdpa_wgmma_packed_softcap_d64 / sdpa_wgmma_packed_softcap_d64_bf16, |p| {
    wgmma_call!(p, WGMMA_D64, chains: 1, PvF16, Packed, WindowKeys<TanhCap>)
});
#[cfg(target_feature = "sm_90a")]
entry!(sdpa_wgmma_packed_softcap_d128 / sdpa_wgmma_packed_softcap_d128_bf16, |p| {
    wgmma_specialized_call!(p, WGMMA_D128, chains: 4, PvF16, Packed, WindowKeys<TanhCap>)
});
#[cfg(target_feature = "sm_90a")]
entry!(sdpa_wgmma_fp8pv_packed_softcap_d64 / sdpa_wgmma_fp8pv_packed_softcap_d64_bf16, |p| {
    wgmma_call!(p, WGMMA_D64, chains: 1, PvE4M3, Packed, WindowKeys<TanhCap>)
});
#[cfg(target_feature = "sm_90a")]
entry!(sdpa_wgmma_fp8pv_packed_softcap_d128 / sdpa_wgmma_fp8pv_packed_softcap_d128_bf16, |p| {
    wgmma_specialized_call!(p, WGMMA_D128, chains: 4, PvE4M3, Packed, WindowKeys<TanhCap>)
});

// The `kv_tiles` prepasses (see `kernels::Prepass`), one per head dimension
// and `Vt` form.
#[cfg(target_feature = "sm_90a")]
entry!(sdpa_kv_tiles_d64, |p| prepass::kv_tiles::<64, PvF16>(&p));
#[cfg(target_feature = "sm_90a")]
entry!(sdpa_kv_tiles_d128, |p| prepass::kv_tiles::<128, PvF16>(&p));
#[cfg(target_feature = "sm_90a")]
entry!(sdpa_kv_tiles_fp8pv_d64, |p| prepass::kv_tiles::<64, PvE4M3>(&p));
#[cfg(target_feature = "sm_90a")]
entry!(sdpa_kv_tiles_fp8pv_d128, |p| prepass::kv_tiles::<128, PvE4M3>(&p));
