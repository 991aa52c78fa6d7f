//! Turning a fuzz case into inputs, and judging an output against the f64
//! reference: with tolerances that follow the case's scales, or, for the
//! lower-precision variants, with each element's bound (`pv_bound`).

use crate::pv_bound::{AGGREGATE_REL_L2, BoundedReference, judge_within_bounds, reference_with_pv_bound_scored};
use crate::shapes::FuzzCase;
use kernels_gpu::kernels::KernelInfo;
use kernels_gpu::variant::OutputDtype;
use sdpa::Fp8Tensor;
use sdpa::metrics::{ErrorStats, LOWER_PRECISION_GATE, LOWER_PRECISION_MAX_REL, compare};
use sdpa::quant::random_problem;
use sdpa::reference::{ScoreRule, attention_scored_f64};

/// `(rel_l2, max_rel)` a suite allows `kernel`: the suite's `usual` pair,
/// or for a lower-precision variant (`Variant::lower_precision`) its own
/// gate's (`sdpa::metrics::LOWER_PRECISION_GATE`), wherever it runs. The
/// adversarial suite's; the fuzz suites judge a lower-precision variant
/// by each element's bound instead ([`Judge`]).
pub fn tolerance(kernel: &KernelInfo, usual: (f64, f64)) -> (f64, f64) {
    if kernel.variant.lower_precision() { (LOWER_PRECISION_GATE.rel_l2, LOWER_PRECISION_MAX_REL) } else { usual }
}

/// Q, K, V for a case: standard normal, quantized per head by amax, then the
/// per-head scales multiplied by 10^`scale_exponents` (the codes stay the same).
pub fn case_inputs(case: &FuzzCase) -> (Fp8Tensor, Fp8Tensor, Fp8Tensor) {
    let (mut q, mut k, mut v) = random_problem(case.shape.q_shape(), case.shape.kv_shape(), case.seed);
    for (t, e) in [&mut q, &mut k, &mut v].into_iter().zip(case.scale_exponents) {
        let factor = 10f32.powi(e as i32);
        t.scales.iter_mut().for_each(|s| *s *= factor);
    }
    (q, k, v)
}

/// The largest |value| of a reference output (at least the smallest
/// normal f64): what `judge`'s `max_rel` is relative to.
pub fn magnitude(reference: &[f64]) -> f64 {
    reference.iter().fold(f64::MIN_POSITIVE, |m, x| m.max(x.abs()))
}

/// Compares an output (its values as f32, `sdpa::Output::values`) with the
/// reference: passes when there is no NaN,
/// the relative L2 error is at most `rel_l2`, and the largest absolute error
/// is at most `max_rel` times the largest |reference| value.
pub fn judge(out: &[f32], reference: &[f64], rel_l2: f64, max_rel: f64) -> (ErrorStats, bool) {
    let bound = max_rel * magnitude(reference);
    let stats = compare(out, reference, bound);
    let ok = stats.nan_count == 0 && stats.rel_l2 <= rel_l2 && stats.max_abs <= bound;
    (stats, ok)
}

/// How the fuzz suites judge a kernel's outputs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Judge {
    /// [`judge`]: relative L2 error at most `rel_l2`, largest error at most
    /// `max_rel` times the largest |reference| value, no NaN.
    Tolerance {
        /// The largest relative L2 error.
        rel_l2: f64,
        /// The largest error over the largest |reference| value.
        max_rel: f64,
    },
    /// The lower-precision variants' (`Variant::lower_precision`): every
    /// element within its bound from P's rounding to E4M3 and the store's
    /// to `output`, relative L2 at most 2^-4, no NaN
    /// (`pv_bound::judge_within_bounds`).
    PvBound {
        /// The type the kernel writes.
        output: OutputDtype,
    },
}

impl Judge {
    /// The judge of `kernel` in a suite whose tolerance is `(rel_l2,
    /// max_rel)`: that tolerance, or [`Judge::PvBound`] for a
    /// lower-precision variant.
    pub fn of(kernel: &KernelInfo, (rel_l2, max_rel): (f64, f64)) -> Judge {
        if kernel.variant.lower_precision() {
            Judge::PvBound { output: kernel.output }
        } else {
            Judge::Tolerance { rel_l2, max_rel }
        }
    }

    /// The f64 reference of attention on `q`, `k`, `v`, with what this
    /// judge needs beside it: `sdpa::reference::attention_f64`, or
    /// `pv_bound::reference_with_pv_bound` (the values and their bounds).
    pub fn reference(self, q: &Fp8Tensor, k: &Fp8Tensor, v: &Fp8Tensor, causal: bool, softmax_scale: f64) -> Expected {
        self.reference_scored((q, k, v), &ScoreRule::causal(causal), softmax_scale)
    }

    /// [`Judge::reference`] with the keys and scores of `rule` (a sliding
    /// window, a softcap): `sdpa::reference::attention_scored_f64`, or
    /// `pv_bound::reference_with_pv_bound_scored`, with each row's score
    /// error slack where `rule` has a window or a cap (rows of few keys,
    /// `tanh.approx`).
    pub fn reference_scored(
        self,
        (q, k, v): (&Fp8Tensor, &Fp8Tensor, &Fp8Tensor),
        rule: &ScoreRule,
        softmax_scale: f64,
    ) -> Expected {
        match self {
            Judge::Tolerance { rel_l2, max_rel } => {
                Expected::Values { values: attention_scored_f64(q, k, v, rule, softmax_scale), rel_l2, max_rel }
            }
            Judge::PvBound { output } => {
                let plain = *rule == ScoreRule::causal(rule.causal);
                let reference = reference_with_pv_bound_scored(q, k, v, rule, softmax_scale, !plain);
                Expected::Bounded { reference, output }
            }
        }
    }
}

/// A case's reference output and how an output is judged against it
/// ([`Judge::reference`]).
#[derive(Clone, Debug, PartialEq)]
pub enum Expected {
    /// Values judged by [`judge`] at a tolerance.
    Values {
        /// O `[B, Hq, Sq, D]`.
        values: Vec<f64>,
        /// The largest relative L2 error.
        rel_l2: f64,
        /// The largest error over the largest |reference| value.
        max_rel: f64,
    },
    /// Values and their bounds, judged by `pv_bound::judge_within_bounds`.
    Bounded {
        /// O and each element's P·V bound.
        reference: BoundedReference,
        /// The type the kernel writes.
        output: OutputDtype,
    },
}

/// What [`Expected::judge`] found.
#[derive(Clone, Debug, PartialEq)]
pub struct Judgement {
    /// The comparison (`sdpa::metrics::compare`).
    pub stats: ErrorStats,
    /// The largest error over the largest |reference| value.
    pub max_rel: f64,
    /// For a bounded reference, the largest error over its element's
    /// allowed error (at most 1 to pass).
    pub bound_ratio: Option<f64>,
    /// Whether the output passes.
    pub passed: bool,
    /// The comparison and what was allowed, in words.
    pub summary: String,
}

impl Expected {
    /// The reference output `[B, Hq, Sq, D]`.
    pub fn values(&self) -> &[f64] {
        match self {
            Expected::Values { values, .. } => values,
            Expected::Bounded { reference, .. } => &reference.values,
        }
    }

    /// Judges `out` (an output's values as f32, `sdpa::Output::values`).
    ///
    /// # Panics
    /// When `out` and the reference differ in length.
    pub fn judge(&self, out: &[f32]) -> Judgement {
        let scale = magnitude(self.values());
        match self {
            Expected::Values { values, rel_l2, max_rel } => {
                let (stats, passed) = judge(out, values, *rel_l2, *max_rel);
                let measured = stats.max_abs / scale;
                let summary = format!(
                    "{stats} max_rel={measured:.2e} (allowed: rel_l2 <= {rel_l2:.1e}, max_rel <= {max_rel:.1e}, no NaN)"
                );
                Judgement { stats, max_rel: measured, bound_ratio: None, passed, summary }
            }
            Expected::Bounded { reference, output } => {
                let j = judge_within_bounds(out, reference, *output);
                let measured = j.stats.max_abs / scale;
                let summary = format!(
                    "{j} max_rel={measured:.2e} (allowed: every element within its P-rounding bound, \
                     rel_l2 <= {AGGREGATE_REL_L2:.2e}, no NaN)"
                );
                Judgement {
                    stats: j.stats,
                    max_rel: measured,
                    bound_ratio: Some(j.worst_ratio),
                    passed: j.passed,
                    summary,
                }
            }
        }
    }
}
