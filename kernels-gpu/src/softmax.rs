//! The online-softmax update of one query row, in base 2. Shared by the
//! kernels (with the SFU's `ex2.approx`) and by the CPU emulation of the
//! tile schedule in the tests (with `f32::exp2`), so both run the same
//! steps, including the rule for rows that have seen no key yet.

use crate::fp8::E4M3_MAX;

/// Running maximum of one row's scaled scores (base 2) over the key blocks
/// seen so far; `-inf` until the row sees a key.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RowMax(pub f32);

impl RowMax {
    /// A row that has seen no key.
    pub const EMPTY: RowMax = RowMax(f32::NEG_INFINITY);

    /// Folds in the maximum scaled score of a new key block and returns
    /// `(alpha, base)`: `alpha` rescales what was accumulated so far (sum and
    /// output), `base` is what to subtract from this block's scaled scores
    /// before `exp2`. A row that still has seen no key uses base 0, so its
    /// masked scores (`-inf`) give `exp2(-inf) = 0` rather than NaN.
    ///
    /// With `slack > 0` the running value moves only when the block's
    /// maximum exceeds it by more than `slack` ([`LAZY_MAX_SLACK`]): it is
    /// then a base at most `slack` under the true maximum (probabilities up
    /// to `2^slack`), and `alpha` is exactly 1 for every block that leaves
    /// it alone, so a kernel can skip its rescale. `slack = 0` keeps the
    /// true maximum.
    #[inline(always)]
    pub fn update(&mut self, block_max_scaled: f32, slack: f32, exp2: impl Fn(f32) -> f32) -> (f32, f32) {
        let m_new = if slack == 0.0 {
            self.0.max(block_max_scaled)
        } else if block_max_scaled > self.0 + slack {
            block_max_scaled
        } else {
            self.0
        };
        let base = RowMax(m_new).base();
        let alpha = exp2(self.0 - base);
        self.0 = m_new;
        (alpha, base)
    }

    /// What a row subtracts from its scaled scores before `exp2`: the
    /// maximum, or 0 while the row has seen no key (so that its masked
    /// scores give `exp2(-inf) = 0` rather than NaN).
    #[inline(always)]
    pub fn base(self) -> f32 {
        if self.0 == f32::NEG_INFINITY { 0.0 } else { self.0 }
    }

    /// A raw score at or below which a block leaves this maximum in place
    /// with its probabilities at most `2^slack`, for scores scaled by
    /// `factor` (> 0): `(m + slack) / factor`, lowered by a relative 2^-20
    /// so that the roundings of the division and of `score * factor` cannot
    /// let a score past it (with a large `factor` one ulp of a raw score is
    /// more than `slack` once scaled); `-inf` before the row's first key, so
    /// that any score moves it. A kernel can then test the scores before it
    /// folds a block's maximum (`wgmma`'s `Rows::softmax_lazy`); a score
    /// above it (or within the 2^-20) only sends the block down the
    /// [`RowMax::update`] path.
    #[inline(always)]
    pub fn moves_above(self, slack: f32, factor: f32) -> f32 {
        let at = (self.0 + slack) / factor;
        at - at.abs() * MOVES_ABOVE_MARGIN
    }
}

/// How far [`RowMax::moves_above`] lowers its threshold, relatively: 2^-20,
/// eight times the worst relative rounding of the division and the product
/// it stands for.
pub const MOVES_ABOVE_MARGIN: f32 = 1.0 / 1_048_576.0;

/// The [`RowMax::update`] slack of the `wgmma` kernel: its running maximum
/// moves only when a block's maximum exceeds it by more than 2^8, so after
/// a row's first blocks most blocks leave every row's maximum in place and
/// the warp skips rescaling its output (as FlashAttention 4 does).
/// Probabilities reach at most 2^8, well inside f16 for `P·V`.
pub const LAZY_MAX_SLACK: f32 = 8.0;

/// The factor that turns a row's accumulated `sum_j p_j v_j` into the output:
/// V's dequantization scale over the row sum. A row that saw no key has
/// `row_sum == 0` and gets 0 (the kernels then write exact zeros, never NaN);
/// a row whose scores read a NaN has a NaN sum and gets NaN, so the NaN
/// reaches its output. (A row that saw a key has `row_sum >= 1`: its largest
/// probability is `2^0`.) `recip` is `1/x`: the kernels' approximate
/// reciprocal (`math::rcp`), `|x| 1.0 / x` on the CPU.
#[inline(always)]
pub fn output_scale(row_sum: f32, v_scale: f32, recip: impl Fn(f32) -> f32) -> f32 {
    if row_sum == 0.0 { 0.0 } else { v_scale * recip(row_sum) }
}

/// Scores (scaled, base 2) whose magnitude stays below this bound allow the
/// fused exponent `2^(fma(s, scale, -base))`: the unrounded product of a
/// row's largest score then lies within 1/4 of the rounded `base` (half an
/// ulp below 2^22), so the largest probability stays in [0.84, 1.19] and,
/// all of a row's probabilities carrying the same factor, the weights are
/// exact. Beyond it (scores of millions, only from extreme scales) the
/// residual could overflow or zero the exponent; the unfused
/// `2^(s * scale - base)` gives the largest score exactly 1.
pub const FUSED_SCORE_LIMIT: f32 = 4_194_304.0;

/// Whether a head whose raw dot products are scaled by `factor` (see
/// [`score_scale_log2`]) may use the fused exponent: its largest possible
/// score, `448^2 * head_dim * |factor|`, is below [`FUSED_SCORE_LIMIT`]. The
/// host decides this once per problem (every head) and launches the kernels
/// with it (`AttnParams::fused_exponent`).
#[inline(always)]
pub fn fused_exponent_ok(factor: f32, head_dim: u32) -> bool {
    E4M3_MAX * E4M3_MAX * head_dim as f32 * factor.abs() < FUSED_SCORE_LIMIT
}

/// `score * factor - base`, the exponent of a probability, as the tiled
/// kernels compute it: one FFMA (`fma`) when `FUSED`, else a multiply and a
/// subtract (which gives the row's largest score exactly 0).
#[inline(always)]
pub fn exponent<const FUSED: bool>(score: f32, factor: f32, base: f32, fma: impl Fn(f32, f32, f32) -> f32) -> f32 {
    if FUSED { fma(score, factor, -base) } else { score * factor - base }
}

/// The natural log-sum-exp of a row whose base-2 statistics are `base`
/// (what its scaled scores had subtracted before `exp2`) and `sum` (of
/// those `exp2`s): `-inf` where the sum is 0 (no key).
#[inline(always)]
pub fn log_sum_exp(base: f32, sum: f32, log2: impl Fn(f32) -> f32) -> f32 {
    if sum == 0.0 { f32::NEG_INFINITY } else { (base + log2(sum)) * core::f32::consts::LN_2 }
}

/// log2(e): scores are multiplied by it so that `exp(x) = 2^(x log2 e)`.
pub const LOG2E: f32 = core::f32::consts::LOG2_E;

/// The one factor applied to raw `q·k` dot products of E4M3 codes: the
/// softmax scale, both dequantization scales and log2(e).
#[inline(always)]
pub fn score_scale_log2(softmax_scale: f32, q_scale: f32, k_scale: f32) -> f32 {
    softmax_scale * q_scale * k_scale * LOG2E
}

/// Merges the partial softmax states of one row that several groups built
/// over disjoint key sets (each its running maximum `m[s]`, base 2, and its
/// row sum `l[s]` relative to that maximum). Returns `(base, sum)`: group
/// `s`'s accumulated output (and sum) must be multiplied by its share
/// `2^(m[s] - base)`, and `sum = sum_s l[s] * 2^(m[s] - base)` is the merged
/// row sum. `base` is the overall maximum, or 0 when no group saw a key
/// (`m = -inf` everywhere), so a group that saw no key gets share 0, never
/// NaN, and a row that saw no key gets sum 0 (then [`output_scale`] gives 0).
#[inline(always)]
pub fn merge_splits<const SPLITS: usize>(m: [f32; SPLITS], l: [f32; SPLITS], exp2: impl Fn(f32) -> f32) -> (f32, f32) {
    let overall = m.iter().fold(f32::NEG_INFINITY, |a, &b| a.max(b));
    let base = if overall == f32::NEG_INFINITY { 0.0 } else { overall };
    let sum = m.iter().zip(&l).fold(0.0, |acc, (&m, &l)| acc + l * exp2(m - base));
    (base, sum)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unit_scales_take_the_fused_exponent_extreme_scales_do_not() {
        // Raw E4M3 values (scales 1), softmax scale 1/sqrt(D): largest score 3.3e6 at D = 128.
        for d in [64u32, 128] {
            assert!(fused_exponent_ok(score_scale_log2(1.0 / (d as f32).sqrt(), 1.0, 1.0), d), "D = {d}");
        }
        assert!(!fused_exponent_ok(score_scale_log2(0.125, 1e3, 1e3), 64));
        assert!(!fused_exponent_ok(-1e9, 64), "the bound uses |factor|");
    }

    #[test]
    fn the_unfused_exponent_gives_the_largest_score_exactly_zero() {
        // A score near 1e18: the fused exponent is off by up to half an ulp
        // of the base (2^36 here), which is why such scales are unfused.
        let (score, factor) = (12_845_056.0f32, 1.8e11f32);
        let base = score * factor;
        assert_eq!(exponent::<false>(score, factor, base, f32::mul_add), 0.0);
        assert!(exponent::<true>(score, factor, base, f32::mul_add).abs() > 1.0);
        // Within the limit the two agree to a fraction of an ulp of 2^22.
        let (score, factor) = (12_845_056.0f32, 0.3f32);
        let gap = exponent::<true>(score, factor, score * factor, f32::mul_add);
        assert!(gap.abs() <= 0.25, "{gap}");
    }

    #[test]
    fn scores_at_or_below_the_threshold_stay_within_the_slack() {
        let mut seed = 0x9E37_79B9u32;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            seed as f32 / u32::MAX as f32
        };
        for _ in 0..200_000 {
            // Factors from 1e-4 to 1e20 (the adversarial suite's extreme
            // scales), a row maximum from a raw score of up to +-5e3.
            let factor = 10f32.powf(24.0 * next() - 4.0);
            let m = RowMax(((next() - 0.5) * 1e4) * factor);
            let threshold = m.moves_above(LAZY_MAX_SLACK, factor);
            // Scores a few ulps either side of the threshold, and a wider spread.
            let ulps = (next() * 16.0) as i32 - 8;
            let near = f32::from_bits((threshold.to_bits() as i32 + ulps * threshold.signum() as i32) as u32);
            let wide = threshold + threshold.abs() * (next() - 0.5) * 1e-4;
            for score in [near, wide] {
                if score <= threshold {
                    // A kernel's fast path keeps the maximum: the exponent,
                    // fused or not, stays within the slack.
                    assert!(score * factor - m.0 <= LAZY_MAX_SLACK, "{score} {factor} {m:?}");
                    assert!(score.mul_add(factor, -m.0) <= LAZY_MAX_SLACK, "{score} {factor} {m:?}");
                }
                if score > threshold + threshold.abs() * 1e-5 && m.0.abs() < 1e6 {
                    let mut moved = m;
                    moved.update(score * factor, LAZY_MAX_SLACK, |x: f32| x.exp2());
                    assert_ne!(moved, m, "a score past the threshold moves the maximum: {score} {factor} {m:?}");
                }
            }
        }
        // Before the first key every score moves the maximum.
        assert_eq!(RowMax::EMPTY.moves_above(LAZY_MAX_SLACK, 0.1), f32::NEG_INFINITY);
    }

    #[test]
    fn merging_groups_that_saw_no_key_gives_zero_not_nan() {
        let (base, sum) = merge_splits([f32::NEG_INFINITY; 3], [0.0; 3], f32::exp2);
        assert_eq!((base, sum), (0.0, 0.0));
        let (base, sum) = merge_splits([2.0, f32::NEG_INFINITY, 1.0], [1.5, 0.0, 2.0], f32::exp2);
        assert_eq!(base, 2.0);
        assert_eq!(sum, 1.5 + 2.0 * 0.5);
    }
}
