//! The log-sum-exp check the GPU tests share: a kernel's f32 log-sum-exp
//! of one row against the f64 reference's, within 1e-3 (relative above 1)
//! plus a slack for what the kernel's arithmetic may add to the scores.
//!
//! The log-sum-exp moves by at most the largest error of the scores it
//! sums (its gradient is the softmax, whose weights add to 1), so the slack
//! is a bound on one score's error, [`score_error_bound`]:
//! - Hopper's E4M3 tensor-core products keep about 13 bits of a sum's
//!   magnitude (they align the products to the largest before adding), so
//!   a score's error is up to `2^-12 * scale * sum |q_c k_c|`;
//! - a softcap's `tanh.approx.f32` has a relative error of about `2^-11`,
//!   so a capped score's error is up to `2^-10 * |score|`.
//!
//! Tests at the usual scale (`1/sqrt(D)`) over many keys stay well inside
//! 1e-3 and pass no slack; the window tests (large scores, rows that see
//! two or three keys) need it.

use sdpa::Fp8Tensor;
use sdpa::reference::ScoreRule;

/// Whether `got` is within 1e-3 of `want` (relative above 1) plus `slack`;
/// an infinite or NaN `want` must be met exactly (a row that sees no key
/// is `-inf`).
pub fn close(got: f64, want: f64, slack: f64) -> bool {
    if want.is_finite() { (got - want).abs() <= 1e-3 * want.abs().max(1.0) + slack } else { got == want }
}

/// The largest error the kernels' arithmetic may put in one score that row
/// `(b, h, i)` of `q` (`[B, Hq, Sq, D]`) sees under `rule` (see the module
/// docs); 0 for a row that sees no key.
pub fn score_error_bound(
    q: &Fp8Tensor,
    k: &Fp8Tensor,
    (b, h, i): (usize, usize, usize),
    rule: &ScoreRule,
    scale: f64,
) -> f64 {
    let [_, hq, sq, d] = q.shape;
    let [_, hkv, skv, _] = k.shape;
    let hk = h / (hq / hkv);
    let key_bound = |j: usize| {
        let (mut dot, mut magnitude) = (0.0, 0.0);
        for c in 0..d {
            let x = q.value(b, h, i, c) * k.value(b, hk, j, c);
            dot += x;
            magnitude += x.abs();
        }
        let products = 2f64.powi(-12) * scale * magnitude;
        let cap = if rule.softcap.is_some() { 2f64.powi(-10) * rule.score(scale * dot).abs() } else { 0.0 };
        products + cap
    };
    (0..skv).filter(|&j| rule.sees(i, j, sq, skv)).map(key_bound).fold(0.0, f64::max)
}

#[cfg(test)]
mod tests {
    use super::*;
    use sdpa::quant::random_problem;
    use sdpa::reference::log_sum_exp_scored_f64;

    #[test]
    fn close_takes_the_slack_and_infinities_exactly() {
        assert!(close(1.0005, 1.0, 0.0));
        assert!(!close(1.002, 1.0, 0.0));
        assert!(close(1.002, 1.0, 0.0015));
        assert!(close(f64::NEG_INFINITY, f64::NEG_INFINITY, 1.0));
        assert!(!close(0.0, f64::NEG_INFINITY, 1.0));
        assert!(!close(f64::NAN, 1.0, 1.0));
    }

    /// The bound stays below 1e-2, and the slack hides a wrongly seen key
    /// in at most a fifth of the rows where the check without it catches
    /// one (a key more moves the log-sum-exp by its softmax weight; where
    /// that is small, neither check sees it: O's check and the CPU
    /// emulation's exact windows hold the edges).
    #[test]
    fn the_bound_is_smaller_than_a_key_more_or_less() {
        let (q, k, _) = random_problem([1, 2, 64, 64], [1, 2, 64, 64], 7);
        let scale = 4.0 / 8.0;
        let (mut caught, mut caught_exact) = (0, 0);
        for i in 2..62 {
            let rule = ScoreRule { left: Some(1), right: Some(1), ..ScoreRule::default() };
            let wider = ScoreRule { left: Some(2), ..rule };
            let bound = score_error_bound(&q, &k, (0, 1, i), &rule, scale);
            assert!(bound > 0.0 && bound < 1e-2, "row {i}: bound {bound}");
            let (want, wrong) = [rule, wider].map(|r| log_sum_exp_scored_f64(&q, &k, (1, i), &r, scale)).into();
            caught += usize::from(!close(wrong, want, bound));
            caught_exact += usize::from(!close(wrong, want, 0.0));
        }
        println!("a key more: caught in {caught} rows with the slack, {caught_exact} without, of 60");
        assert!(caught * 5 >= caught_exact * 4, "the slack hides a key more in {} rows", caught_exact - caught);
    }
}
