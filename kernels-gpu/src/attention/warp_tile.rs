//! What one warp computes on `mma.sync` for its query rows, shared by the
//! `mma` and `split` kernels: Q fragments from shared memory, and the scores
//! `S = Q·K^T` of one key block (on E4M3 `mma` on sm_89, on f16 `mma` with
//! the operands converted by this code on sm_90: see [`QFragments`]).
//!
//! Tiles are E4M3 rows in shared memory, `row_bytes` apart (padded rows, see
//! `tiles::SMEM_ROW_PAD`). `ldmatrix` reads them: lane `l` addresses row
//! `l % 8` of matrix `l / 8`.

#[cfg(target_feature = "sm_90a")]
use crate::arch::cvt;
use crate::arch::{ldmatrix, mma, sreg};
use crate::layout::RowLayout;

/// One warp's Q operand as [`scores`] takes it, per 32 head columns.
///
/// On sm_89: the E4M3 A fragment of `mma.m16n8k32.e4m3`, which sm_89 runs
/// natively. On sm_90 there is no FP8 `mma.sync`: ptxas emulates each one
/// with F2FP conversions of both operands and two `HMMA.16816` into a
/// zeroed accumulator that FADDs then add up. There Q is converted once to
/// the f16 A fragments of two `mma.m16n8k16.f16` ([`f16_halves`] order) and
/// [`scores`] issues those directly into the accumulators.
#[cfg(not(target_feature = "sm_90a"))]
pub type QFragments<const QK_STEPS: usize> = [[u32; 4]; QK_STEPS];
/// One warp's Q operand as [`scores`] takes it (see the sm_89 definition):
/// per 32 head columns, two f16 A fragments.
#[cfg(target_feature = "sm_90a")]
pub type QFragments<const QK_STEPS: usize> = [[[u32; 4]; 2]; QK_STEPS];

/// Four E4M3 codes (k ascending) as two f16 pairs: `[f16x2(k0, k1),
/// f16x2(k2, k3)]`, exact.
///
/// Used to turn an `m16n8k32.e4m3` operand into `m16n8k16.f16` ones: the
/// reduction is the same under any order of k that A and B share, and this
/// one maps f16 slot pairs `(2q, 2q + 1)` and `(8 + 2q, 9 + 2q)` onto E4M3
/// columns `4q .. 4q + 1` and `4q + 2 .. 4q + 3` (`q` = lane % 4), so each
/// register stays in its lane.
#[cfg(target_feature = "sm_90a")]
#[inline(always)]
fn f16_halves(codes: u32) -> [u32; 2] {
    [cvt::e4m3x2_to_f16x2(codes as u16), cvt::e4m3x2_to_f16x2((codes >> 16) as u16)]
}

/// The Q operand ([`QFragments`]) of the 16 query rows `row0 ..` of the Q
/// tile at `q_tile` (shared address of its first row, rows laid out as
/// `rows`), one entry per 32 columns (`QK_STEPS = HEAD_DIM / 32`).
///
/// # Safety
/// Converged warp; rows `row0 .. row0 + 16` of `32 * QK_STEPS` readable
/// bytes in the tile.
#[inline(always)]
pub unsafe fn q_fragments<const QK_STEPS: usize>(q_tile: u32, rows: RowLayout, row0: u32) -> QFragments<QK_STEPS> {
    let lane = sreg::lane_id();
    let (matrix, row) = (lane / 8, lane % 8);
    core::array::from_fn(|ks| {
        let r = (matrix % 2) * 8 + row;
        let col = ks as u32 * 32 + (matrix / 2) * 16;
        // SAFETY: converged warp; a 16-byte row inside the Q rows.
        let a = unsafe { ldmatrix::load_x4(q_tile + rows.offset(row0 + r, col)) };
        #[cfg(not(target_feature = "sm_90a"))]
        return a;
        // The m16n8k32 A fragment holds rows g, g + 8 at E4M3 columns
        // 4q .. 4q + 3 (a[0], a[1]) and 16 + 4q .. (a[2], a[3]).
        #[cfg(target_feature = "sm_90a")]
        {
            let [a0, a1, a2, a3] = a.map(f16_halves);
            [[a0[0], a1[0], a0[1], a1[1]], [a2[0], a3[0], a2[1], a3[1]]]
        }
    })
}

/// `S = Q·K^T` for the `8 * S_TILES` keys of the K tile at `k_tile` (shared
/// address of its first key row, rows laid out as `rows`) and each of the warp's `ROW_TILES` 16-row
/// tiles of Q: one 16x8 f32 accumulator tile per 8 keys and row tile, in
/// the layout of `mma.m16n8k32` (see `online`). Each K fragment is read
/// (and on sm_90 converted) once for all row tiles.
///
/// Both kernels pass one row tile: two per warp measured slower for
/// `split` (see lab/). The array form stays because it is what brings
/// `mma` at D=64 on sm_90a from 130 to 128 registers, a fourth block per
/// SM (capping the registers at 128 with a launch bound spills instead).
///
/// # Safety
/// Converged warp; `8 * S_TILES` rows of `32 * QK_STEPS` readable bytes at
/// `k_tile` in layout `rows`; `S_TILES` even.
#[inline(always)]
pub unsafe fn scores<const QK_STEPS: usize, const S_TILES: usize, const ROW_TILES: usize>(
    q_frag: &[QFragments<QK_STEPS>; ROW_TILES],
    k_tile: u32,
    rows: RowLayout,
) -> [[[f32; 4]; S_TILES]; ROW_TILES] {
    let lane = sreg::lane_id();
    let (matrix, row) = (lane / 8, lane % 8);
    let mut s = [[[0f32; 4]; S_TILES]; ROW_TILES];
    for pair in 0..S_TILES / 2 {
        for ks in 0..QK_STEPS {
            let key = pair as u32 * 16 + (matrix / 2) * 8 + row;
            let col = ks as u32 * 32 + (matrix % 2) * 16;
            // SAFETY: converged warp; rows inside the K tile.
            let b = unsafe { ldmatrix::load_x4(k_tile + rows.offset(key, col)) };
            #[cfg(not(target_feature = "sm_90a"))]
            for (s, q) in s.iter_mut().zip(q_frag) {
                // SAFETY: converged warp.
                unsafe {
                    mma::m16n8k32_e4m3(&mut s[2 * pair], q[ks], [b[0], b[1]]);
                    mma::m16n8k32_e4m3(&mut s[2 * pair + 1], q[ks], [b[2], b[3]]);
                }
            }
            // B of tile 2 pair: b[0] (E4M3 columns 4q ..), b[1] (16 + 4q ..).
            #[cfg(target_feature = "sm_90a")]
            for t in 0..2 {
                let (lo, hi) = (f16_halves(b[2 * t]), f16_halves(b[2 * t + 1]));
                for (s, q) in s.iter_mut().zip(q_frag) {
                    // SAFETY: converged warp.
                    unsafe {
                        mma::m16n8k16_f16(&mut s[2 * pair + t], q[ks][0], lo);
                        mma::m16n8k16_f16(&mut s[2 * pair + t], q[ks][1], hi);
                    }
                }
            }
        }
    }
    s
}
