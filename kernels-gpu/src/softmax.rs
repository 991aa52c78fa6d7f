//! The online-softmax update of one query row, in base 2. Shared by the
//! kernels (with the SFU's `ex2.approx`) and by the CPU emulation of the
//! tile schedule in the tests (with `f32::exp2`), so both run the same
//! steps, including the rule for rows that have seen no key yet.

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
    #[inline(always)]
    pub fn update(&mut self, block_max_scaled: f32, exp2: impl Fn(f32) -> f32) -> (f32, f32) {
        let m_new = self.0.max(block_max_scaled);
        let base = if m_new == f32::NEG_INFINITY { 0.0 } else { m_new };
        let alpha = exp2(self.0 - base);
        self.0 = m_new;
        (alpha, base)
    }
}

/// The factor that turns a row's accumulated `sum_j p_j v_j` into the output:
/// V's dequantization scale over the row sum. A row that saw no key has
/// `row_sum == 0` and gets 0 (the kernels then write exact zeros, never NaN);
/// a row whose scores read a NaN has a NaN sum and gets NaN, so the NaN
/// reaches its output. (A row that saw a key has `row_sum >= 1`: its largest
/// probability is `2^0`.)
#[inline(always)]
pub fn output_scale(row_sum: f32, v_scale: f32) -> f32 {
    if row_sum == 0.0 { 0.0 } else { v_scale / row_sum }
}

/// Row bases (scaled maxima, base 2) below this magnitude allow the fused
/// exponent `2^(fma(s, scale, -base))`: the unrounded product of the row's
/// largest score then lies within a quarter of 1 of the rounded `base`
/// (half an ulp of 2^22 is 1/4), so the largest probability stays in
/// [0.84, 1.19] and, all of a row's probabilities carrying the same factor,
/// the weights are exact. Larger bases (scores beyond ~4 million, only from
/// extreme scales) take the unfused `2^(s * scale - base)`, which gives the
/// largest score exactly 1.
pub const FUSED_BASE_LIMIT: f32 = 4_194_304.0;

/// Whether a row with this base may use the fused exponent (see
/// [`FUSED_BASE_LIMIT`]); `base` is 0 for a row that has seen no key.
#[inline(always)]
pub fn fused_exponent_ok(base: f32) -> bool {
    base.abs() < FUSED_BASE_LIMIT
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
