//! The choreography of a `wgmma` key loop step, apart from its
//! mathematics: the pins and the fence before a `wgmma`, the issues of the
//! scores and of P·V, the waits for each, the rescale where a maximum
//! moved, and the warp's release of a stage.

use super::acc::flat;
use super::pv::PvForm;
use crate::arch::{mbarrier, wgmma};
use crate::attention::online;

/// Issues `S = Q·K^T` of one 64-key block into `s` (`wgmma.m64n64k32.e4m3`
/// per 32 head columns; `descs[ks]` = the Q and K descriptors of step `ks`)
/// and commits the group; not waited for.
///
/// # Safety
/// Warpgroup-uniform, after [`wgmma::fence`]; Q and K written and fenced
/// for the async proxy.
#[inline(always)]
pub unsafe fn issue_scores<const QK_STEPS: usize, const S_TILES: usize>(
    s: &mut [[f32; 4]; S_TILES],
    descs: &[[u64; 2]; QK_STEPS],
) {
    // SAFETY: forwarded; N = 4 * S_TILES (8 or 24 tiles: 64 or 192 keys).
    unsafe {
        for (ks, [a, b]) in descs.iter().enumerate() {
            match (S_TILES, ks) {
                (8, 0) => wgmma::m64n64k32_e4m3::<0>(flat::<S_TILES, 32>(s), *a, *b),
                (8, _) => wgmma::m64n64k32_e4m3::<1>(flat::<S_TILES, 32>(s), *a, *b),
                (_, 0) => wgmma::m64n192k32_e4m3::<0>(flat::<S_TILES, 96>(s), *a, *b),
                (_, _) => wgmma::m64n192k32_e4m3::<1>(flat::<S_TILES, 96>(s), *a, *b),
            }
        }
        wgmma::commit_group();
    }
}

/// Issues the scores of the first key block (`qk`, [`issue_scores`]), one
/// group, not waited for, after pinning the registers they read and write
/// (as [`issue_scores_and_pv`]).
///
/// # Safety
/// Warpgroup-uniform; Q and the block's K written and fenced for the async
/// proxy.
#[inline(always)]
pub unsafe fn issue_first_scores<const QK_STEPS: usize, const S_TILES: usize>(
    s: &mut [[f32; 4]; S_TILES],
    mut qk: [[u64; 2]; QK_STEPS],
) {
    qk.iter_mut().flatten().for_each(wgmma::pin_u64);
    s.iter_mut().flatten().for_each(wgmma::pin_f32);
    // SAFETY: forwarded.
    unsafe {
        wgmma::fence();
        issue_scores(s, &qk);
    }
}

/// Issues the scores of one key block (`qk`, [`issue_scores`]) and then
/// `O += P·V` of another (`pv`, [`PvForm::issue`]), two groups, not waited
/// for. First it pins every register the products read or write
/// (`wgmma::pin_f32`): no instruction that defines one may sink past
/// `wgmma.fence`, or ptxas serializes the `wgmma`s.
///
/// # Safety
/// Warpgroup-uniform; the tiles the descriptors describe written and
/// fenced for the async proxy; `O_TILES` is 8 or 16.
#[inline(always)]
pub unsafe fn issue_scores_and_pv<
    Pv: PvForm,
    const QK_STEPS: usize,
    const S_TILES: usize,
    const O_TILES: usize,
    const PV_STEPS: usize,
>(
    s: &mut [[f32; 4]; S_TILES],
    mut qk: [[u64; 2]; QK_STEPS],
    o: &mut [[f32; 4]; O_TILES],
    sums: &mut [[f32; 4]; 1],
    p_frag: &mut [[u32; 4]; PV_STEPS],
    mut pv: [u64; PV_STEPS],
) {
    qk.iter_mut().flatten().for_each(wgmma::pin_u64);
    pv.iter_mut().for_each(wgmma::pin_u64);
    o.iter_mut().flatten().for_each(wgmma::pin_f32);
    Pv::pin_sums(sums);
    s.iter_mut().flatten().for_each(wgmma::pin_f32);
    p_frag.iter_mut().flatten().for_each(wgmma::pin_u32);
    // SAFETY: forwarded.
    unsafe {
        wgmma::fence();
        issue_scores(s, &qk);
        Pv::issue::<O_TILES, PV_STEPS>(o, &mut sums[0], p_frag, &pv);
    }
}

/// Waits for the older of a step's two `wgmma` groups, the scores
/// ([`issue_scores_and_pv`]), while the P·V products that read `p_frag`
/// stay in flight (`wgmma::wait_group_holding`).
///
/// # Safety
/// Warpgroup-uniform.
#[inline(always)]
pub unsafe fn scores_landed<const PV_STEPS: usize>(p_frag: &[[u32; 4]; PV_STEPS]) {
    // SAFETY: forwarded.
    unsafe { wgmma::wait_group_holding::<1, PV_STEPS>(p_frag) };
}

/// Waits for the step's P·V products, which read `p_frag` until then. The
/// next block's P must be converted only after it: converted before, it
/// took registers that ptxas counts as the in-flight P·V's A operand, and
/// at D = 64 ptxas then serialized every `wgmma` of the loop (C7513;
/// `cargo xtask sass sdpa_wgmma_d64` shows the waits).
///
/// # Safety
/// Warpgroup-uniform.
#[inline(always)]
pub unsafe fn pv_landed<const PV_STEPS: usize>(p_frag: &[[u32; 4]; PV_STEPS]) {
    // SAFETY: forwarded.
    unsafe { wgmma::wait_group_holding::<0, PV_STEPS>(p_frag) };
}

/// Rescales what P·V accumulated (O, and the row sums where the tensor
/// cores keep them) where the softmax moved a row's maximum (`moved`, its
/// `alpha`). With the lazy maxima (`LAZY_MAX_SLACK`) most blocks move none,
/// and the warp skips it.
#[inline(always)]
pub fn rescale<Pv: PvForm, const O_TILES: usize>(
    o: &mut [[f32; 4]; O_TILES],
    sums: &mut [[f32; 4]; 1],
    moved: Option<[f32; 2]>,
) {
    if let Some(alpha) = moved {
        online::rescale(o, alpha);
        Pv::rescale_sums(sums, alpha);
    }
}

/// The end of a key loop step: every product reading the step's block
/// (its scores, waited for in the step before; its P·V, in this one) is
/// done, and the warp (its lane 0) arrives on the stage's "empty" barrier
/// at `empty`.
///
/// # Safety
/// Once per warp and block, after the step's last wait.
#[inline(always)]
pub unsafe fn release(lane: u32, empty: u32) {
    if lane == 0 {
        // SAFETY: one arrival per warp and block; the barrier counts warps.
        unsafe { mbarrier::arrive(empty) };
    }
}
