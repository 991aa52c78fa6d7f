//! The per-element error bound of the lower-precision variants
//! (`Variant::lower_precision`: `wgmma-fp8pv`), computed in f64 beside the
//! reference, and the judge that uses it.
//!
//! # What the kernel does
//!
//! Per query row, with scores `s_j` (base 2) and P·V's weights rounded to
//! E4M3 by `r` (`cvt.rn.satfinite`: round to nearest even), the kernel
//! writes (`kernels_gpu::variant::Variant::WgmmaFp8Pv`; the CPU emulation,
//! `emulate::RowState::visit`, does the same in f32)
//!
//! ```text
//! O_i = sum_j r(p_j) v_ji / l,   l = sum_j p_j   (the unrounded P's row sum)
//! ```
//!
//! # The rounding of one weight
//!
//! E4M3 (`kernels_gpu::fp8`) has 3 mantissa bits, smallest normal 2^-6 and
//! subnormal spacing 2^-9. A normal `p` in `[2^e, 2^(e+1))` lies between
//! codes `2^(e-3)` apart, so it moves at most `2^(e-4) <= 2^-4 p`; below
//! 2^-6 the codes are `2^-9` apart, so it moves at most `2^-10`. As
//! `2^-4 p >= 2^-10` exactly when `p >= 2^-6`, both read
//!
//! ```text
//! |r(p) - p| <= max(2^-4 p, 2^-10)           (p <= 448: no saturation)
//! ```
//!
//! # The bound on one output element
//!
//! With `p_j = 2^(s_j - S)` relative to the row's largest score `S`
//! (so `l >= 1`):
//!
//! ```text
//! |O_i - O_ref_i| <= sum_j max(2^-4 p_j, 2^-10) |v_ji| / l      (the P·V bound)
//! ```
//!
//! The kernel rounds `p~_j = 2^(s_j - m)` relative to its running maximum
//! `m` when key `j` arrives (at most about `2^LAZY_MAX_SLACK = 2^8`, below
//! E4M3's 448: no saturation), then scales the rounded weight, its error
//! and its share of the row sum by `2^(m - M)` for its final maximum `M`.
//! A running maximum is always a score already seen (the lazy one,
//! `softmax::RowMax::update`, moves only to a block's maximum), so
//! `m <= M <= S`. The weight's error over the kernel's row sum
//! `L = l 2^(S - M)` is then at most `max(2^-4 p~_j, 2^-10) 2^(m - M) / L`:
//! its relative part is `2^-4 p_j / l`, as above, and its absolute part
//! `2^-10 2^(m - S) / l <= 2^-10 / l`. The running maximum can only make
//! the error smaller against this bound (though it rounds the row's
//! largest weight, exact at `p = 1`, whenever `m < S`).
//!
//! # What the kernel adds
//!
//! - Its other errors ([`WEIGHT_ERROR_SLACK`], [`ARITHMETIC_SLACK`]): each
//!   is a small relative error of a weight, of a sum of weights times V or
//!   of the final scale, so all of them together stay within
//!   `eps sum_j p_j |v_ji| / l` (the row's weighted magnitude, at least
//!   `|O_i|`) for a small `eps`: f32 sums of at most 2^15 terms
//!   (`n 2^-24 <= 2^-9`, about `sqrt(n) 2^-24` in practice), the tensor
//!   cores' accumulation (coarser than f32 on FP8 inputs, still far below
//!   2^-9 relative over a 32-key step), `ex2.approx` and `rcp.approx`
//!   (about 2^-22 relative each), and the scores' own errors (f32 sums and
//!   roundings), which move a weight by `exp(error) - 1` and the output by
//!   at most twice that in these units (below 1e-3 at the fuzz's scales,
//!   whose Q x K scale product is at most 10). The judge allows
//!   `2^-8 sum_j p_j |v_ji| / l` for them, on top of the P·V bound times
//!   1.05 (at least a further `3.1e-3 sum_j p_j |v_ji| / l`, as the bound
//!   is at least `2^-4 sum_j p_j |v_ji| / l`); a normal weight moves at
//!   most `2^-4 / (1 + 2^-4)` of itself, 6% less than the bound allows,
//!   and a subnormal one all of its `2^-10`, so an element carried by
//!   subnormal weights (a column whose largest weight's V is 0) leaves
//!   only these two allowances to the other errors.
//! - Flushing to zero: f32's smallest normal, 2^-126, absolute
//!   ([`FLUSH_TO_ZERO`]).
//! - The store's rounding to f16 or bf16 (round to nearest): half an ulp at
//!   the f32 value, which lies within the terms above of `|O_ref_i|`
//!   ([`half_ulp`]).
//!
//! # The judge
//!
//! No NaN, every element within its bound, and a relative L2 error of at
//! most [`AGGREGATE_REL_L2`] = 2^-4, the largest relative error one weight
//! can take (every weight off by it in the same direction gives
//! `(1 + 2^-4) O`). The bounds hold however the roundings align on a few
//! weights, but they grow with `sum_j p_j |v_ji|`, often many times
//! `|O_i|`: an output biased throughout could stay within them, and the
//! aggregate check fails it.

use crate::lse::score_error_bound;
use kernels_gpu::variant::OutputDtype;
use sdpa::Fp8Tensor;
use sdpa::metrics::{ErrorStats, compare};
use sdpa::reference::ScoreRule;

/// The largest relative rounding error of a normal E4M3 weight: half the
/// spacing of 3 mantissa bits, 2^-4.
pub const E4M3_RELATIVE_ROUNDING: f64 = 1.0 / 16.0;

/// The largest absolute rounding error of a subnormal E4M3 weight (below
/// 2^-6): half the subnormal spacing 2^-9, 2^-10.
pub const E4M3_SUBNORMAL_ROUNDING: f64 = 1.0 / 1024.0;

/// The factor on the P·V bound for the kernel's other errors (module
/// docs, "What the kernel adds").
pub const ARITHMETIC_SLACK: f64 = 1.05;

/// The kernel's other errors' allowance, over the row's weighted magnitude
/// `sum_j p_j |v_ji| / l`: 2^-8 (module docs, "What the kernel adds").
pub const WEIGHT_ERROR_SLACK: f64 = 1.0 / 256.0;

/// f32's smallest normal: what flushing a subnormal to zero can lose.
pub const FLUSH_TO_ZERO: f64 = f32::MIN_POSITIVE as f64;

/// The relative L2 error a lower-precision output may reach at most, 2^-4
/// (module docs, "The judge").
pub const AGGREGATE_REL_L2: f64 = 1.0 / 16.0;

/// The f64 reference output and, per element, its P·V bound and weighted
/// magnitude (module docs).
#[derive(Clone, Debug, PartialEq)]
pub struct BoundedReference {
    /// O `[B, Hq, Sq, D]`, as `sdpa::reference::attention_f64` defines it.
    pub values: Vec<f64>,
    /// `sum_j max(2^-4 p_j, 2^-10) |v_ji| / l` per element.
    pub pv_bounds: Vec<f64>,
    /// `sum_j p_j |v_ji| / l` per element.
    pub magnitudes: Vec<f64>,
    /// Per element, the share of `magnitudes` that the scores' own errors
    /// may move the output by beyond [`WEIGHT_ERROR_SLACK`]: 0 at the
    /// usual scales; under a score rule with large scores or a cap,
    /// `4 (exp(2 e) - 1)` for the row's score error bound `e`
    /// ([`crate::lse::score_error_bound`]: every weight, and the row sum,
    /// off by at most `exp(2 e) - 1`).
    pub score_slack: Vec<f64>,
}

impl BoundedReference {
    /// The error element `i` may have in a kernel's `output`: its P·V bound
    /// times [`ARITHMETIC_SLACK`], plus [`WEIGHT_ERROR_SLACK`] times its
    /// weighted magnitude, plus [`FLUSH_TO_ZERO`], plus the store's half
    /// ulp at the largest value the f32 result can have.
    pub fn allowed_error(&self, i: usize, output: OutputDtype) -> f64 {
        let before_store = ARITHMETIC_SLACK * self.pv_bounds[i]
            + (WEIGHT_ERROR_SLACK + self.score_slack[i]) * self.magnitudes[i]
            + FLUSH_TO_ZERO;
        before_store + half_ulp(self.values[i].abs() + before_store, output)
    }
}

/// The largest error `|r(p) - p|` of rounding a weight `p` in `[0, 448]` to
/// E4M3 (module docs).
pub fn e4m3_rounding_bound(p: f64) -> f64 {
    (E4M3_RELATIVE_ROUNDING * p).max(E4M3_SUBNORMAL_ROUNDING)
}

/// The reference output of attention on `q`, `k`, `v` (the definition of
/// `sdpa::reference`: GQA, causal masking aligned bottom-right, a row that
/// sees no key all zeros) and each element's P·V bound, in f64, in one
/// pass over each row's weights.
///
/// # Panics
/// When the shapes do not fit together (a test oracle).
pub fn reference_with_pv_bound(
    q: &Fp8Tensor,
    k: &Fp8Tensor,
    v: &Fp8Tensor,
    causal: bool,
    softmax_scale: f64,
) -> BoundedReference {
    reference_with_pv_bound_scored(q, k, v, &ScoreRule::causal(causal), softmax_scale, false)
}

/// [`reference_with_pv_bound`] with the keys and scores of `rule` (a
/// sliding window, a softcap); with `score_errors`, each row's
/// [`BoundedReference::score_slack`] from its scores' error bound (the
/// window tests' large scales and caps), else 0.
///
/// # Panics
/// As [`reference_with_pv_bound`].
pub fn reference_with_pv_bound_scored(
    q: &Fp8Tensor,
    k: &Fp8Tensor,
    v: &Fp8Tensor,
    rule: &ScoreRule,
    softmax_scale: f64,
    score_errors: bool,
) -> BoundedReference {
    let len = q.data.len();
    let (mut values, mut pv_bounds, mut magnitudes) = (vec![0.0; len], vec![0.0; len], vec![0.0; len]);
    let mut score_slack = vec![0.0; len];
    for_each_row(q, k, v, rule, softmax_scale, |row, weights, l| {
        let slack = if score_errors {
            let e = score_error_bound(q, k, (row.batch, row.head, row.query), rule, softmax_scale);
            4.0 * (2.0 * e).exp_m1()
        } else {
            0.0
        };
        for x in 0..row.len {
            let (mut o, mut bound, mut magnitude) = (0.0, 0.0, 0.0);
            // (Keys the rule hides have weight 0 and no rounding.)
            for (j, &p) in weights.iter().enumerate().filter(|(_, p)| **p != 0.0) {
                let value = row.value(j, x);
                o += p * value;
                bound += e4m3_rounding_bound(p) * value.abs();
                magnitude += p * value.abs();
            }
            values[row.at + x] = o / l;
            pv_bounds[row.at + x] = bound / l;
            magnitudes[row.at + x] = magnitude / l;
            score_slack[row.at + x] = slack;
        }
    });
    BoundedReference { values, pv_bounds, magnitudes, score_slack }
}

pub(crate) struct Row<'a> {
    /// The index of its first output element in `[B, Hq, Sq, D]`.
    pub(crate) at: usize,
    /// Its elements, D.
    pub(crate) len: usize,
    v: &'a Fp8Tensor,
    batch: usize,
    kv_head: usize,
    /// Its query head and row.
    head: usize,
    query: usize,
}

impl Row<'_> {
    /// V at key `j`, column `x`, dequantized.
    pub(crate) fn value(&self, j: usize, x: usize) -> f64 {
        self.v.value(self.batch, self.kv_head, j, x)
    }
}

/// Calls `each` for every query row that sees a key under `rule`, with
/// its weights `p_j = exp(s_j - max)` over every key (0 for those the rule
/// hides) and their sum `l`: the softmax of `sdpa::reference`,
/// unnormalised.
pub(crate) fn for_each_row(
    q: &Fp8Tensor,
    k: &Fp8Tensor,
    v: &Fp8Tensor,
    rule: &ScoreRule,
    softmax_scale: f64,
    mut each: impl FnMut(&Row, &[f64], f64),
) {
    let [batch, heads_q, seq_q, dim] = q.shape;
    let [batch_kv, heads_kv, seq_kv, dim_kv] = k.shape;
    assert!(
        v.shape == k.shape && batch_kv == batch && dim_kv == dim && heads_kv > 0 && heads_q % heads_kv == 0,
        "reference_with_pv_bound: q {:?}, k {:?}, v {:?} do not fit together",
        q.shape,
        k.shape,
        v.shape
    );
    let group = heads_q / heads_kv;
    let mut weights = Vec::with_capacity(seq_kv);
    for b in 0..batch {
        for h in 0..heads_q {
            let kv_head = h / group;
            for i in 0..seq_q {
                // Weight 0 for the keys the rule hides; rows that see no
                // key are left out.
                if !(0..seq_kv).any(|j| rule.sees(i, j, seq_q, seq_kv)) {
                    continue;
                }
                weights.clear();
                weights.extend((0..seq_kv).map(|j| {
                    let dot = (0..dim).map(|x| q.value(b, h, i, x) * k.value(b, kv_head, j, x)).sum::<f64>();
                    if rule.sees(i, j, seq_q, seq_kv) { rule.score(softmax_scale * dot) } else { f64::NEG_INFINITY }
                }));
                // A NaN score makes the row NaN, as in `sdpa::reference`.
                let max = weights.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                let max = if weights.iter().any(|s| s.is_nan()) { f64::NAN } else { max };
                weights.iter_mut().for_each(|s| *s = (*s - max).exp());
                let l: f64 = weights.iter().sum();
                let at = ((b * heads_q + h) * seq_q + i) * dim;
                let row = Row { at, len: dim, v, batch: b, kv_head, head: h, query: i };
                each(&row, &weights, l);
            }
        }
    }
}

/// Half an ulp of `output` at `|x|`: the most a round to nearest moves `x`.
/// A normal value with `m` significant bits (f16 11, bf16 8) moves at most
/// `2^-m |x|`; a subnormal one half the subnormal spacing (f16 2^-24, bf16
/// 2^-133).
pub fn half_ulp(x: f64, output: OutputDtype) -> f64 {
    let (significant_bits, subnormal_spacing) = match output {
        OutputDtype::F16 => (11, 2f64.powi(-24)),
        OutputDtype::Bf16 => (8, 2f64.powi(-133)),
    };
    (x.abs() * 2f64.powi(-significant_bits)).max(subnormal_spacing / 2.0)
}

/// The outcome of [`judge_within_bounds`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BoundJudgement {
    /// The comparison (`sdpa::metrics::compare`; its `bad_count` counts the
    /// elements outside their bounds, non-finite ones included).
    pub stats: ErrorStats,
    /// The largest `|o - ref|` over its allowed error (at most 1 to pass;
    /// infinite for a non-finite output).
    pub worst_ratio: f64,
    /// The element with the largest ratio: `(index, output, reference,
    /// allowed error)`.
    pub worst: Option<(usize, f32, f64, f64)>,
    /// No NaN, every element within its bound, relative L2 at most
    /// [`AGGREGATE_REL_L2`].
    pub passed: bool,
}

impl std::fmt::Display for BoundJudgement {
    /// `<stats> error/bound=<r> (worst: element <i> = <o>, reference <r>,
    /// allowed <e>)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} error/bound={:.2}", self.stats, self.worst_ratio)?;
        if let Some((i, o, r, e)) = self.worst {
            write!(f, " (worst: element {i} = {o:e}, reference {r:e}, allowed {e:.2e})")?;
        }
        Ok(())
    }
}

/// Judges a lower-precision kernel's output `out` (written as `output`)
/// against `reference` (module docs, "The judge").
///
/// # Panics
/// When `out` and the reference differ in length.
pub fn judge_within_bounds(out: &[f32], reference: &BoundedReference, output: OutputDtype) -> BoundJudgement {
    assert_eq!(out.len(), reference.values.len(), "judge_within_bounds: output and reference lengths differ");
    let mut outside = 0;
    let mut worst_ratio = 0.0f64;
    let mut worst = None;
    for (i, (&o, &r)) in out.iter().zip(&reference.values).enumerate() {
        let allowed = reference.allowed_error(i, output);
        let error = (f64::from(o) - r).abs();
        // A NaN error or bound is outside, with an infinite ratio.
        let within = error <= allowed;
        let ratio = if within || (error.is_finite() && allowed.is_finite()) { error / allowed } else { f64::INFINITY };
        outside += usize::from(!within);
        if worst.is_none() || ratio > worst_ratio {
            (worst_ratio, worst) = (ratio, Some((i, o, r, allowed)));
        }
    }
    let mut stats = compare(out, &reference.values, f64::INFINITY);
    stats.bad_count = outside;
    let passed = stats.nan_count == 0 && outside == 0 && stats.rel_l2 <= AGGREGATE_REL_L2;
    BoundJudgement { stats, worst_ratio, worst, passed }
}
