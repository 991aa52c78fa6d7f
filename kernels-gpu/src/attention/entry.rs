//! PTX entry points: one monomorphic `extern "ptx-kernel"` function per row
//! of [`crate::kernels::KERNELS`], its tile constants taken from that table.
//! Each macro call emits a kernel's two entries, `name` storing f16 and
//! `name_bf16` bf16 ([`super::output`]).

use super::block::{Rolled, Unrolled};
use super::merge::{Apart, InTiles};
use super::output::{Bf16, F16};
use super::split::{PairRows, PlanRows};
use crate::kernels::{MMA_D64, MMA_D128, SPLIT_D64, SPLIT_D128};
#[cfg(target_feature = "sm_90a")]
use crate::kernels::{
    SPLIT_N64_D64, SPLIT_N64_D64_EXCHANGE_APART, SPLIT_N64_D128, WGMMA_D64, WGMMA_D128, WGMMA_FP8PV_LONG_D128,
};
use crate::params::AttnParams;

/// Emits an `mma` entry for a tile shape.
macro_rules! mma_entry {
    ($f16:ident / $bf16:ident, $tiles:expr, copies: $unrolled:ty) => {
        mma_entry!(@one $f16, F16, $tiles, $unrolled);
        mma_entry!(@one $bf16, Bf16, $tiles, $unrolled);
    };
    (@one $name:ident, $out:ty, $tiles:expr, $unrolled:ty) => {
        /// PTX entry point (see `kernels::KERNELS`).
        ///
        /// # Safety
        /// Launched by the host with validated parameters and the geometry of `kernels::KERNELS`.
        #[unsafe(no_mangle)]
        pub unsafe extern "ptx-kernel" fn $name(p: AttnParams) {
            // SAFETY: forwarded launch contract.
            unsafe {
                super::mma::forward::<
                    { $tiles.head_dim as usize },
                    { $tiles.block_n as usize },
                    { $tiles.stages as usize },
                    { $tiles.warps as usize },
                    { $tiles.head_dim as usize / 32 },
                    { $tiles.head_dim as usize / 8 },
                    { $tiles.block_n as usize / 8 },
                    $unrolled,
                    $out,
                >(&p)
            }
        }
    };
}

/// Emits a `split` entry for a tile shape.
macro_rules! split_entry {
    (
        $f16:ident / $bf16:ident,
        $tiles:expr,
        softmax_chains: $chains:literal,
        exchange: $apart:ty,
        rows: $pairs:ty
    ) => {
        split_entry!(@one $f16, F16, $tiles, $chains, $apart, $pairs);
        split_entry!(@one $bf16, Bf16, $tiles, $chains, $apart, $pairs);
    };
    (@one $name:ident, $out:ty, $tiles:expr, $chains:literal, $apart:ty, $pairs:ty) => {
        /// PTX entry point (see `kernels::KERNELS`).
        ///
        /// # Safety
        /// Launched by the host with validated parameters and the geometry of `kernels::KERNELS`.
        #[unsafe(no_mangle)]
        pub unsafe extern "ptx-kernel" fn $name(p: AttnParams) {
            // SAFETY: forwarded launch contract.
            unsafe {
                super::split::forward::<
                    { $tiles.head_dim as usize },
                    { $tiles.block_n as usize },
                    { $tiles.stages as usize },
                    { $tiles.block_m as usize / 16 },
                    { $tiles.splits as usize },
                    { $tiles.head_dim as usize / 32 },
                    { $tiles.head_dim as usize / 8 },
                    { $tiles.block_n as usize / 8 },
                    { $tiles.head_dim as usize / 8 / $tiles.splits as usize },
                    $chains,
                    $apart,
                    $pairs,
                    $out,
                >(&p)
            }
        }
    };
}

/// Emits a `wgmma` entry for a tile shape (sm_90a builds only).
#[cfg(target_feature = "sm_90a")]
macro_rules! wgmma_entry {
    (@forward $tiles:expr, $chains:literal, $exponent:ty, $pv:ident, $out:ty, $p:ident) => {
        super::wgmma::forward::<
            { $tiles.head_dim as usize },
            { $tiles.warps as usize / 4 },
            { $tiles.block_n as usize },
            { $tiles.block_n as usize / 8 },
            { $tiles.stages as usize },
            { $tiles.head_dim as usize / 32 },
            { $tiles.head_dim as usize / 8 },
            $chains,
            $exponent,
            { $tiles.block_n as usize / <super::wgmma::$pv as super::wgmma::PvForm>::KEYS_PER_PRODUCT },
            super::wgmma::$pv,
            $out,
        >(&$p)
    };
    ($f16:ident / $bf16:ident, $tiles:expr, softmax_chains: $chains:literal, pv: $pv:ident) => {
        wgmma_entry!(@one $f16, F16, $tiles, $chains, $pv);
        wgmma_entry!(@one $bf16, Bf16, $tiles, $chains, $pv);
    };
    (@one $name:ident, $out:ty, $tiles:expr, $chains:literal, $pv:ident) => {
        /// PTX entry point (see `kernels::KERNELS`).
        ///
        /// # Safety
        /// Launched by the host with validated parameters and the geometry of `kernels::KERNELS`.
        #[unsafe(no_mangle)]
        pub unsafe extern "ptx-kernel" fn $name(p: AttnParams) {
            // SAFETY: forwarded launch contract; the fused or the unfused
            // exponent as the host decided (`AttnParams::fused_exponent`).
            unsafe {
                if p.fused_exponent != 0 {
                    wgmma_entry!(@forward $tiles, $chains, super::online::FusedFma, $pv, $out, p)
                } else {
                    wgmma_entry!(@forward $tiles, $chains, super::online::Unfused, $pv, $out, p)
                }
            }
        }
    };
}

// Unrolled copies (`RowCopy::issue_unrolled`) measured -13..-15% time for
// D = 128 and +4..6% for D = 64 (H200 run 30, results/STAGES.md stage 21).
mma_entry!(sdpa_mma_d64 / sdpa_mma_d64_bf16, MMA_D64, copies: Rolled);
mma_entry!(sdpa_mma_d128 / sdpa_mma_d128_bf16, MMA_D128, copies: Unrolled);
split_entry!(sdpa_split_d64 / sdpa_split_d64_bf16, SPLIT_D64, softmax_chains: 1, exchange: InTiles, rows: PlanRows);
split_entry!(sdpa_split_d128 / sdpa_split_d128_bf16, SPLIT_D128, softmax_chains: 1, exchange: InTiles, rows: PlanRows);
// Four chains (spelled out, see `split::forward`) and the exchange apart:
// -1.4..-5.2% at D = 64 (H100 runs 144-148, results/STAGES.md stages 91 and
// 95); four chains measured +1..1.4% for `split` and +1..2% for
// `split-n64` at D = 128.
#[cfg(target_feature = "sm_90a")]
split_entry!(
    sdpa_split_n64_d64 / sdpa_split_n64_d64_bf16,
    SPLIT_N64_D64,
    softmax_chains: 4,
    exchange: Apart,
    rows: PlanRows
);
// (`kernels` sizes its shared memory with the exchange apart.)
#[cfg(target_feature = "sm_90a")]
const _: () = assert!(SPLIT_N64_D64_EXCHANGE_APART);
// The same with Q, K and V copied as 128-byte pair rows, for even lengths
// (`kernels::SPLIT_N64_PAIRS_KEYS`).
#[cfg(target_feature = "sm_90a")]
split_entry!(
    sdpa_split_n64_pairs_d64 / sdpa_split_n64_pairs_d64_bf16,
    SPLIT_N64_D64,
    softmax_chains: 4,
    exchange: Apart,
    rows: PairRows
);
#[cfg(target_feature = "sm_90a")]
split_entry!(sdpa_split_n64_d128 / sdpa_split_n64_d128_bf16, SPLIT_N64_D128, softmax_chains: 1, exchange: InTiles, rows: PlanRows);
// The softmax's row maximum and sum as four chains (`online::fold_row`)
// measured -3..-7% at D = 128 and +1..2% at D = 64, where two blocks per SM
// hide the longer chain (see lab/).
#[cfg(target_feature = "sm_90a")]
wgmma_entry!(sdpa_wgmma_d64 / sdpa_wgmma_d64_bf16, WGMMA_D64, softmax_chains: 1, pv: PvF16);
#[cfg(target_feature = "sm_90a")]
wgmma_entry!(sdpa_wgmma_d128 / sdpa_wgmma_d128_bf16, WGMMA_D128, softmax_chains: 4, pv: PvF16);
// `wgmma-fp8pv` (opt-in): P·V on E4M3 operands.
#[cfg(target_feature = "sm_90a")]
wgmma_entry!(sdpa_wgmma_fp8pv_d64 / sdpa_wgmma_fp8pv_d64_bf16, WGMMA_D64, softmax_chains: 1, pv: PvE4M3);
#[cfg(target_feature = "sm_90a")]
wgmma_entry!(sdpa_wgmma_fp8pv_d128 / sdpa_wgmma_fp8pv_d128_bf16, WGMMA_D128, softmax_chains: 4, pv: PvE4M3);
// Its 192-key form for long rows (`kernels::select`).
#[cfg(target_feature = "sm_90a")]
wgmma_entry!(sdpa_wgmma_fp8pv_long_d128 / sdpa_wgmma_fp8pv_long_d128_bf16, WGMMA_FP8PV_LONG_D128, softmax_chains: 4, pv: PvE4M3);

/// Emits a `kv_tiles` prepass entry for a head dimension (sm_90a builds only).
#[cfg(target_feature = "sm_90a")]
macro_rules! kv_tiles_entry {
    ($name:ident, $head_dim:expr, vt: $vt:ident) => {
        /// PTX entry point of a prepass (see `kernels::Prepass`).
        ///
        /// # Safety
        /// Launched by the host with validated parameters and the prepass geometry.
        #[unsafe(no_mangle)]
        pub unsafe extern "ptx-kernel" fn $name(p: AttnParams) {
            // SAFETY: forwarded launch contract.
            unsafe { super::prepass::kv_tiles::<$head_dim, super::wgmma::$vt>(&p) }
        }
    };
}

#[cfg(target_feature = "sm_90a")]
kv_tiles_entry!(sdpa_kv_tiles_d64, 64, vt: PvF16);
#[cfg(target_feature = "sm_90a")]
kv_tiles_entry!(sdpa_kv_tiles_d128, 128, vt: PvF16);
#[cfg(target_feature = "sm_90a")]
kv_tiles_entry!(sdpa_kv_tiles_fp8pv_d64, 64, vt: PvE4M3);
#[cfg(target_feature = "sm_90a")]
kv_tiles_entry!(sdpa_kv_tiles_fp8pv_d128, 128, vt: PvE4M3);
