//! What one warp computes on `mma.sync` for its 16 query rows, shared by the
//! `mma` and `split` kernels: Q fragments from shared memory, and the scores
//! `S = Q·K^T` of one key block.
//!
//! Tiles are E4M3 rows in shared memory, `row_bytes` apart (padded rows, see
//! `tiles::SMEM_ROW_PAD`). `ldmatrix` reads them: lane `l` addresses row
//! `l % 8` of matrix `l / 8`.

use crate::arch::{ldmatrix, mma, sreg};

/// The A fragments (`mma.m16n8k32` e4m3 layout) of the 16 query rows at
/// `q_rows` (shared address of the warp's first row), one per 32 columns
/// (`QK_STEPS = HEAD_DIM / 32`).
///
/// # Safety
/// Converged warp; 16 rows of `32 * QK_STEPS` readable bytes at `q_rows`.
#[inline(always)]
pub unsafe fn q_fragments<const QK_STEPS: usize>(q_rows: u32, row_bytes: u32) -> [[u32; 4]; QK_STEPS] {
    let lane = sreg::lane_id();
    let (matrix, row) = (lane / 8, lane % 8);
    core::array::from_fn(|ks| {
        let r = (matrix % 2) * 8 + row;
        let col = ks as u32 * 32 + (matrix / 2) * 16;
        // SAFETY: converged warp; a 16-byte row inside the Q rows.
        unsafe { ldmatrix::load_x4(q_rows + r * row_bytes + col) }
    })
}

/// `S = Q·K^T` for the `8 * S_TILES` keys of the K tile at `k_tile` (shared
/// address of its first key row): one 16x8 f32 accumulator tile per 8 keys,
/// in the layout of `mma.m16n8k32` (see `online`).
///
/// # Safety
/// Converged warp; `8 * S_TILES` rows of `32 * QK_STEPS` readable bytes at
/// `k_tile`; `S_TILES` even.
#[inline(always)]
pub unsafe fn scores<const QK_STEPS: usize, const S_TILES: usize>(
    q_frag: &[[u32; 4]; QK_STEPS],
    k_tile: u32,
    row_bytes: u32,
) -> [[f32; 4]; S_TILES] {
    let lane = sreg::lane_id();
    let (matrix, row) = (lane / 8, lane % 8);
    let mut s = [[0f32; 4]; S_TILES];
    for pair in 0..S_TILES / 2 {
        for (ks, a) in q_frag.iter().enumerate() {
            let key = pair as u32 * 16 + (matrix / 2) * 8 + row;
            let col = ks as u32 * 32 + (matrix % 2) * 16;
            // SAFETY: converged warp; rows inside the K tile.
            unsafe {
                let b = ldmatrix::load_x4(k_tile + key * row_bytes + col);
                mma::m16n8k32_e4m3(&mut s[2 * pair], *a, [b[0], b[1]]);
                mma::m16n8k32_e4m3(&mut s[2 * pair + 1], *a, [b[2], b[3]]);
            }
        }
    }
    s
}
