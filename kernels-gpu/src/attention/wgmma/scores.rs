//! Which keys a `wgmma` block visits and what its scores are before the
//! softmax: the kernel's score policy. [`CausalKeys`] is the default
//! (every key, or causal masking as `AttnParams::causal` says); the window
//! entries take [`WindowKeys`], which visits only the key tiles of the
//! block's window (`window::KeyWindow::key_range`), masks the tiles on its
//! edges, and caps the scores as its [`ScoreCap`] says.

use super::super::block::BlockJob;
use super::super::online::MaskGeometry;
use crate::arch::math;
use crate::params::AttnParams;
use crate::softmax;
use crate::window::{self, KeyWindow};
use core::marker::PhantomData;

/// Which keys a block visits and how its raw scores are shaped: a kernel's
/// policy.
pub trait ScorePolicy {
    /// Whether the block's keys may start past key 0 (then its key blocks
    /// are the 64-key tiles from `job.key_begin`'s).
    const WINDOWED: bool;

    /// Sets the block's key range (`job.key_begin .. job.key_end`).
    fn limit_keys(p: &AttnParams, job: &mut BlockJob, block_m: u32);

    /// The factor the softmax applies to the scores this policy leaves
    /// (base 2).
    fn softmax_factor(p: &AttnParams, job: &BlockJob) -> f32;

    /// Whether the softmax may take the fused exponent
    /// (`softmax::fused_exponent_ok` for the scores this policy leaves).
    fn fused_exponent_ok(p: &AttnParams, job: &BlockJob, head_dim: u32) -> bool;

    /// Shapes the raw scores `s` of the key block from `key0` in place
    /// and masks (`-inf`) those of keys a row must not see (`geometry`:
    /// this thread's rows and columns, and the block's rows). Only
    /// windowed policies are asked: under [`CausalKeys`] the kernel leaves
    /// its mask to the softmax (`online::Rows::softmax_lazy`) as before
    /// windows.
    fn shape<const S_TILES: usize>(
        p: &AttnParams,
        job: &BlockJob,
        s: &mut [[f32; 4]; S_TILES],
        geometry: (MaskGeometry, u32),
        key0: u32,
    );
}

/// Every key, or causal masking (`AttnParams::causal`); scores as they
/// are.
pub struct CausalKeys;

/// The key window of `AttnParams::window_left`, `window_right` (causal
/// masking folded in by the host), scores capped as `Cap` says.
pub struct WindowKeys<Cap: ScoreCap>(PhantomData<Cap>);

impl ScorePolicy for CausalKeys {
    const WINDOWED: bool = false;

    #[inline(always)]
    fn limit_keys(_p: &AttnParams, _job: &mut BlockJob, _block_m: u32) {}

    // Scores as they are: `Uncapped`'s factor and exponent.
    #[inline(always)]
    fn softmax_factor(p: &AttnParams, job: &BlockJob) -> f32 {
        Uncapped::softmax_factor(p, job)
    }

    #[inline(always)]
    fn fused_exponent_ok(p: &AttnParams, job: &BlockJob, head_dim: u32) -> bool {
        Uncapped::fused_exponent_ok(p, job, head_dim)
    }

    #[inline(always)]
    fn shape<const S_TILES: usize>(
        _p: &AttnParams,
        _job: &BlockJob,
        _s: &mut [[f32; 4]; S_TILES],
        _geometry: (MaskGeometry, u32),
        _key0: u32,
    ) {
    }
}

impl<Cap: ScoreCap> ScorePolicy for WindowKeys<Cap> {
    const WINDOWED: bool = true;

    #[inline(always)]
    fn limit_keys(p: &AttnParams, job: &mut BlockJob, block_m: u32) {
        (job.key_begin, job.key_end) = match job.rows {
            0 => (0, 0),
            _ => p.window().key_range(job.row0, block_m, job.seq_q, job.seq_kv),
        };
    }

    #[inline(always)]
    fn softmax_factor(p: &AttnParams, job: &BlockJob) -> f32 {
        Cap::softmax_factor(p, job)
    }

    #[inline(always)]
    fn fused_exponent_ok(p: &AttnParams, job: &BlockJob, head_dim: u32) -> bool {
        Cap::fused_exponent_ok(p, job, head_dim)
    }

    #[inline(always)]
    fn shape<const S_TILES: usize>(
        p: &AttnParams,
        job: &BlockJob,
        s: &mut [[f32; 4]; S_TILES],
        (g, block_m): (MaskGeometry, u32),
        key0: u32,
    ) {
        Cap::cap(p, job, s);
        let window = p.window();
        if window.block_needs_mask((job.row0, block_m), key0, 8 * S_TILES as u32, g.seq_q, g.seq_kv) {
            for (t, tile) in s.iter_mut().enumerate() {
                for (e, x) in tile.iter_mut().enumerate() {
                    let row = g.row + 8 * (e as u32 / 2);
                    let key = key0 + t as u32 * 8 + g.col + e as u32 % 2;
                    if !window.sees(row, key, g.seq_q, g.seq_kv) {
                        *x = f32::NEG_INFINITY;
                    }
                }
            }
        }
    }
}

/// How a window entry shapes its scores before the mask: a kernel's
/// policy.
pub trait ScoreCap {
    /// As [`ScorePolicy::softmax_factor`].
    fn softmax_factor(p: &AttnParams, job: &BlockJob) -> f32;

    /// As [`ScorePolicy::fused_exponent_ok`].
    fn fused_exponent_ok(p: &AttnParams, job: &BlockJob, head_dim: u32) -> bool;

    /// Shapes the raw scores in place.
    fn cap<const S_TILES: usize>(p: &AttnParams, job: &BlockJob, s: &mut [[f32; 4]; S_TILES]);
}

/// Scores as they are.
pub struct Uncapped;

/// Scores capped: `softcap * tanh(score / softcap)` (`AttnParams::softcap`,
/// the score in natural-log units): each raw dot product `x` becomes
/// `tanh(x * window::softcap_input_scale(..))`, which the softmax scales by
/// `window::softcap_score_factor`. One `tanh.approx` per score.
pub struct TanhCap;

impl ScoreCap for Uncapped {
    #[inline(always)]
    fn softmax_factor(_p: &AttnParams, job: &BlockJob) -> f32 {
        job.score_scale_log2
    }

    #[inline(always)]
    fn fused_exponent_ok(_p: &AttnParams, job: &BlockJob, head_dim: u32) -> bool {
        softmax::fused_exponent_ok(job.score_scale_log2, head_dim)
    }

    #[inline(always)]
    fn cap<const S_TILES: usize>(_p: &AttnParams, _job: &BlockJob, _s: &mut [[f32; 4]; S_TILES]) {}
}

impl ScoreCap for TanhCap {
    #[inline(always)]
    fn softmax_factor(p: &AttnParams, _job: &BlockJob) -> f32 {
        window::softcap_score_factor(p.softcap)
    }

    /// Capped scores lie in [-1, 1], and the host keeps the cap at most
    /// `window::MAX_SOFTCAP`: far below the fused exponent's limit.
    #[inline(always)]
    fn fused_exponent_ok(_p: &AttnParams, _job: &BlockJob, _head_dim: u32) -> bool {
        const { assert!(window::MAX_SOFTCAP * softmax::LOG2E < softmax::FUSED_SCORE_LIMIT) };
        true
    }

    #[inline(always)]
    fn cap<const S_TILES: usize>(p: &AttnParams, job: &BlockJob, s: &mut [[f32; 4]; S_TILES]) {
        let scale = window::softcap_input_scale(job.score_scale_log2, p.softcap);
        for tile in s.iter_mut() {
            for x in tile.iter_mut() {
                *x = math::tanh(*x * scale);
            }
        }
    }
}
