//! How a `wgmma` kernel multiplies P·V: [`PvF16`] or [`PvE4M3`] (see the
//! parent module's doc).

use super::acc::flat;
use crate::arch::cvt::pack_e4m3x4;
use crate::arch::wgmma;
use crate::attention::online::{self, Rows};
use crate::attention::prepass::VtForm;
use crate::layout::fp8_pv_source;
use crate::tiles::ONES_ROWS;

/// How P·V is multiplied: [`PvF16`] (f16 P by f16 `Vt`, the row sums from
/// the tensor cores) or [`PvE4M3`] (E4M3 P by V's own E4M3 bytes, the row
/// sums from the softmax), with the `Vt` form each reads ([`VtForm`]).
pub trait PvForm: VtForm {
    /// Keys per P·V product: 16 (`k16`, f16) or 32 (`k32`, E4M3).
    const KEYS_PER_PRODUCT: usize;
    /// Rows of ones after each `Vt` tile in shared memory: [`ONES_ROWS`]
    /// where P·V also sums P's rows, or none.
    const SUM_ROWS: u32;

    /// The A operands of P·V for the probabilities `p`, one per product.
    fn fragments<const S_TILES: usize, const PV_STEPS: usize>(p: &[[f32; 4]; S_TILES]) -> [[u32; 4]; PV_STEPS];

    /// Issues `O += P·V` of one key block and commits the group; not waited
    /// for: one product per `KEYS_PER_PRODUCT` keys, P from registers
    /// (`p_frag`), `vt[kk]` the `Vt` descriptor of product `kk`'s keys.
    /// Where `SUM_ROWS > 0` the tile is followed by rows of ones, and the 8
    /// columns past D add P's row sums to every element of `sums`.
    ///
    /// # Safety
    /// Warpgroup-uniform, after [`wgmma::fence`]; `Vt` (and its ones)
    /// written and fenced for the async proxy; `O_TILES` is 8 or 16.
    unsafe fn issue<const O_TILES: usize, const PV_STEPS: usize>(
        o: &mut [[f32; 4]; O_TILES],
        sums: &mut [f32; 4],
        p_frag: &[[u32; 4]; PV_STEPS],
        vt: &[u64; PV_STEPS],
    );

    /// Adds this lane's probabilities `p` to the rows' sums where the
    /// softmax keeps them (`Rows::add_sums`, after the rescale by the
    /// moved maxima's `alpha`); nothing where P·V sums them.
    fn add_row_sums<const S_TILES: usize>(rows: &mut Rows, p: &[[f32; 4]; S_TILES], alpha: Option<[f32; 2]>);

    /// Pins the tensor cores' row sums before a `wgmma` that adds to them
    /// (`wgmma::pin_f32`); nothing where P·V does not sum the rows.
    fn pin_sums(sums: &mut [[f32; 4]; 1]);

    /// Rescales the tensor cores' row sums with O by `alpha`; nothing where
    /// P·V does not sum the rows.
    fn rescale_sums(sums: &mut [[f32; 4]; 1], alpha: [f32; 2]);

    /// The sums of this thread's two rows, from `sums` or from `rows`.
    ///
    /// # Safety
    /// The whole warp calls it together (quad shuffles).
    unsafe fn row_sums(rows: &Rows, sums: &[[f32; 4]; 1]) -> [f32; 2];
}

/// f16 P·V (`wgmma.m64n(D + 8)k16.f16`): `Vt` is V converted to f16
/// (exact), each stage followed by [`ONES_ROWS`] rows of ones, so the
/// product's last 8 columns sum P's rows as P·V multiplies them.
pub struct PvF16;

/// E4M3 P·V (`wgmma.m64nDk32.e4m3`, the `wgmma-fp8pv` variant): `Vt` is
/// V's own E4M3 bytes in [`crate::layout::fp8_pv_key`]'s key order, P is
/// rounded to E4M3 from the lane's own accumulator elements; the softmax
/// sums the rows in f32.
pub struct PvE4M3;

impl VtForm for PvF16 {
    #[inline(always)]
    fn e4m3() -> bool {
        false
    }
}

impl VtForm for PvE4M3 {
    #[inline(always)]
    fn e4m3() -> bool {
        true
    }
}

impl PvForm for PvF16 {
    const KEYS_PER_PRODUCT: usize = 16;
    const SUM_ROWS: u32 = ONES_ROWS;

    /// The f16 `k16` fragments ([`online::p_fragments`]).
    #[inline(always)]
    fn fragments<const S_TILES: usize, const PV_STEPS: usize>(p: &[[f32; 4]; S_TILES]) -> [[u32; 4]; PV_STEPS] {
        const { assert!(PV_STEPS * 2 == S_TILES) };
        online::p_fragments(p)
    }

    #[inline(always)]
    unsafe fn issue<const O_TILES: usize, const PV_STEPS: usize>(
        o: &mut [[f32; 4]; O_TILES],
        sums: &mut [f32; 4],
        p_frag: &[[u32; 4]; PV_STEPS],
        vt: &[u64; PV_STEPS],
    ) {
        // SAFETY: forwarded; N = 4 * O_TILES.
        unsafe {
            for (a, b) in p_frag.iter().zip(vt) {
                match O_TILES {
                    8 => wgmma::m64n72k16_f16_rs::<1>(flat::<O_TILES, 32>(o), sums, *a, *b),
                    _ => wgmma::m64n136k16_f16_rs::<1>(flat::<O_TILES, 64>(o), sums, *a, *b),
                }
            }
            wgmma::commit_group();
        }
    }

    #[inline(always)]
    fn add_row_sums<const S_TILES: usize>(_: &mut Rows, _: &[[f32; 4]; S_TILES], _: Option<[f32; 2]>) {}

    #[inline(always)]
    fn pin_sums(sums: &mut [[f32; 4]; 1]) {
        sums.iter_mut().flatten().for_each(wgmma::pin_f32);
    }

    #[inline(always)]
    fn rescale_sums(sums: &mut [[f32; 4]; 1], alpha: [f32; 2]) {
        online::rescale(sums, alpha);
    }

    /// Every element of `sums[0]` (a 16x8 tile of P·V's accumulator) is a
    /// row sum: `sums[0][0]` row `group`, `sums[0][2]` row `group + 8`.
    #[inline(always)]
    unsafe fn row_sums(_: &Rows, sums: &[[f32; 4]; 1]) -> [f32; 2] {
        [sums[0][0], sums[0][2]]
    }
}

impl PvForm for PvE4M3 {
    const KEYS_PER_PRODUCT: usize = 32;
    const SUM_ROWS: u32 = 0;

    /// The E4M3 `k32` fragments: each register four of the lane's own
    /// elements in [`crate::layout::fp8_pv_key`]'s key order
    /// ([`fp8_pv_source`]).
    #[inline(always)]
    fn fragments<const S_TILES: usize, const PV_STEPS: usize>(p: &[[f32; 4]; S_TILES]) -> [[u32; 4]; PV_STEPS] {
        const { assert!(PV_STEPS * 4 == S_TILES) };
        core::array::from_fn(|kk| {
            core::array::from_fn(|r| {
                pack_e4m3x4(core::array::from_fn(|i| {
                    let (tile, element) = fp8_pv_source(kk as u32, r as u32, i as u32);
                    p[tile as usize][element as usize]
                }))
            })
        })
    }

    #[inline(always)]
    unsafe fn issue<const O_TILES: usize, const PV_STEPS: usize>(
        o: &mut [[f32; 4]; O_TILES],
        _: &mut [f32; 4],
        p_frag: &[[u32; 4]; PV_STEPS],
        vt: &[u64; PV_STEPS],
    ) {
        // SAFETY: forwarded; N = 4 * O_TILES.
        unsafe {
            for (a, b) in p_frag.iter().zip(vt) {
                match O_TILES {
                    8 => wgmma::m64n64k32_e4m3_rs::<1>(flat::<O_TILES, 32>(o), *a, *b),
                    _ => wgmma::m64n128k32_e4m3_rs::<1>(flat::<O_TILES, 64>(o), *a, *b),
                }
            }
            wgmma::commit_group();
        }
    }

    #[inline(always)]
    fn add_row_sums<const S_TILES: usize>(rows: &mut Rows, p: &[[f32; 4]; S_TILES], alpha: Option<[f32; 2]>) {
        rows.add_sums(p, alpha);
    }

    #[inline(always)]
    fn pin_sums(_: &mut [[f32; 4]; 1]) {}

    #[inline(always)]
    fn rescale_sums(_: &mut [[f32; 4]; 1], _: [f32; 2]) {}

    #[inline(always)]
    unsafe fn row_sums(rows: &Rows, _: &[[f32; 4]; 1]) -> [f32; 2] {
        // SAFETY: forwarded.
        unsafe { rows.row_sums() }
    }
}
