//! Turning a fuzz case into inputs, and judging an output against the f64
//! reference with tolerances that follow the case's scales.

use crate::shapes::FuzzCase;
use kernels_gpu::kernels::KernelInfo;
use sdpa::Fp8Tensor;
use sdpa::metrics::{ErrorStats, LOWER_PRECISION_GATE, LOWER_PRECISION_MAX_REL, compare};
use sdpa::quant::random_problem;

/// `(rel_l2, max_rel)` a suite allows `kernel`: the suite's `usual` pair,
/// or for a lower-precision variant (`Variant::lower_precision`) its own
/// gate's (`sdpa::metrics::LOWER_PRECISION_GATE`), wherever it runs.
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
