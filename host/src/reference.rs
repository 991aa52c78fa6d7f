//! The f64 reference: attention written straight from its definition, on the
//! dequantized inputs (what the kernels are given), so a comparison against
//! it measures the kernel and not the quantization.
//!
//! Nothing here shares code with `kernels-gpu` beyond the E4M3 decode inside
//! [`Fp8Tensor::value`]: no tile constants, no schedule, no index helpers.
//! This is the independent check.
//!
//! Definition, per batch `b` and query head `h`, with `g = Hq / Hkv` and the
//! key/value head `hk = h / g` (grouped-query attention):
//!
//! ```text
//! s[i][j] = softmax_scale * sum_d Q[b,h,i,d] * K[b,hk,j,d]
//! visible(i, j) = !causal || j <= i + Skv - Sq      (bottom-right aligned)
//! p[i][j] = exp(s[i][j] - max_j' s[i][j']) / sum_j'' exp(s[i][j''] - max)   over visible keys
//! O[b,h,i,d] = sum_j p[i][j] * V[b,hk,j,d]
//! ```
//!
//! A query row that sees no key (causal with `Sq > Skv`) is all zeros.
//!
//! A sliding window ([`ScoreRule`]) narrows `visible` further: with `pos =
//! i + Skv - Sq`, key `j` is visible iff `pos - left <= j <= pos + right`
//! (a side without a limit unchecked). A softcap replaces `s[i][j]` by
//! `cap * tanh(s[i][j] / cap)` before the softmax.
//!
//! NaN inputs propagate through plain f64 arithmetic: a NaN in Q row `i`
//! makes row `i` NaN; a NaN in K row `j` makes NaN every query row that sees
//! key `j`; a NaN in V at `[j, d]` makes NaN column `d` of every query row that
//! sees key `j`, *even where that key's softmax weight is 0*, since
//! `0 * NaN = NaN`. Rows that cannot see the poisoned key stay finite. For
//! NaN in Q and K this is what PyTorch's `scaled_dot_product_attention` gives;
//! for NaN in V it is not (torch's math path multiplies masked weights 0 by
//! every V row, so a V NaN reaches every row of the head), and torch's
//! `is_causal` is top-left aligned where ours is bottom-right. The tiled GPU
//! kernels deviate in one documented place: see `tests/src/adversarial.rs`.

use crate::tensor::Fp8Tensor;
use kernels_gpu::fp8::e4m3_to_f32;

/// Checks that q, k, v fit together and returns `(group, kv_heads)`.
///
/// # Panics
/// When the shapes do not describe an attention problem (the reference is a
/// test oracle; validation of user input is the library's job).
fn check_shapes(q: &Fp8Tensor, k: &Fp8Tensor, v: &Fp8Tensor) -> usize {
    let [bq, hq, _, dq] = q.shape;
    let [bk, hk, _, dk] = k.shape;
    assert_eq!(k.shape, v.shape, "reference: k and v shapes differ");
    assert_eq!(bq, bk, "reference: batch of q and k differ");
    assert_eq!(dq, dk, "reference: head_dim of q and k differ");
    assert!(hk > 0 && hq % hk == 0, "reference: Hq={hq} not a multiple of Hkv={hk}");
    for (name, t) in [("q", q), ("k", k), ("v", v)] {
        assert_eq!(
            t.data.len(),
            t.shape.iter().product::<usize>(),
            "reference: {name} data length does not match its shape"
        );
        assert_eq!(t.scales.len(), t.shape[1], "reference: {name} needs one scale per head");
    }
    hq / hk
}

/// Which keys a query row sees and what its scores are: causal masking, a
/// sliding window and a softcap (see the module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ScoreRule {
    /// Causal masking (bottom-right aligned).
    pub causal: bool,
    /// Keys before a row's position that it sees; `None`: every one.
    pub left: Option<usize>,
    /// Keys after a row's position that it sees; `None`: every one.
    pub right: Option<usize>,
    /// The score cap; `None`: scores as they are.
    pub softcap: Option<f64>,
}

impl ScoreRule {
    /// Causal masking or none, no window, no cap.
    pub fn causal(causal: bool) -> ScoreRule {
        ScoreRule { causal, ..ScoreRule::default() }
    }

    /// Whether query `i` sees key `j` of `skv` keys, `sq` queries.
    pub fn sees(&self, i: usize, j: usize, sq: usize, skv: usize) -> bool {
        let (pos, j) = (i as i128 + skv as i128 - sq as i128, j as i128);
        (!self.causal || j <= pos)
            && self.left.is_none_or(|left| j >= pos - left as i128)
            && self.right.is_none_or(|right| j <= pos + right as i128)
    }

    /// The score the softmax takes for a scaled dot product `s`.
    pub fn score(&self, s: f64) -> f64 {
        match self.softcap {
            Some(cap) => cap * (s / cap).tanh(),
            None => s,
        }
    }
}

/// The maximum of `xs`, NaN if any element is NaN, `-inf` if empty.
fn max_nan(xs: &[f64]) -> f64 {
    let mut m = f64::NEG_INFINITY;
    for &x in xs {
        if x.is_nan() {
            return f64::NAN;
        }
        if x > m {
            m = x;
        }
    }
    m
}

/// Full attention output `[B, Hq, Sq, D]` in f64, row-major.
///
/// Computes, per `(b, h)`, the whole score matrix, its row-wise softmax and
/// the product with V (a matrix formulation, independent of
/// [`attention_rows_f64`], which works one row at a time).
///
/// # Panics
/// When the shapes are inconsistent (see the module docs for what they must
/// be); the reference is a test oracle.
pub fn attention_f64(q: &Fp8Tensor, k: &Fp8Tensor, v: &Fp8Tensor, causal: bool, softmax_scale: f64) -> Vec<f64> {
    attention_scored_f64(q, k, v, &ScoreRule::causal(causal), softmax_scale)
}

/// [`attention_f64`] with the keys and scores of `rule` (a sliding window,
/// a softcap).
///
/// # Panics
/// As [`attention_f64`].
pub fn attention_scored_f64(
    q: &Fp8Tensor,
    k: &Fp8Tensor,
    v: &Fp8Tensor,
    rule: &ScoreRule,
    softmax_scale: f64,
) -> Vec<f64> {
    let group = check_shapes(q, k, v);
    let [batch, hq, sq, d] = q.shape;
    let skv = k.shape[2];
    let mut out = vec![0.0f64; batch * hq * sq * d];
    let mut scores = vec![0.0f64; sq * skv];
    for b in 0..batch {
        for h in 0..hq {
            let hk = h / group;
            // S = scale * Q K^T, masked entries left as -inf.
            for i in 0..sq {
                for j in 0..skv {
                    scores[i * skv + j] = if rule.sees(i, j, sq, skv) {
                        let dot: f64 = (0..d).map(|x| q.value(b, h, i, x) * k.value(b, hk, j, x)).sum();
                        rule.score(softmax_scale * dot)
                    } else {
                        f64::NEG_INFINITY
                    };
                }
            }
            // P = softmax(S) row by row, in place.
            for i in 0..sq {
                let row = &mut scores[i * skv..(i + 1) * skv];
                let any_visible = (0..skv).any(|j| rule.sees(i, j, sq, skv));
                if !any_visible {
                    row.fill(0.0);
                    continue;
                }
                let m = max_nan(row);
                for s in row.iter_mut() {
                    *s = (*s - m).exp();
                }
                let l: f64 = row.iter().sum();
                for s in row.iter_mut() {
                    *s /= l;
                }
            }
            // O = P V; a fully masked row has P = 0 and so O = 0. Masked keys
            // are skipped (not multiplied by 0), so a NaN in V at a key the
            // row cannot see stays out of that row.
            for i in 0..sq {
                let base = ((b * hq + h) * sq + i) * d;
                for j in 0..skv {
                    if !rule.sees(i, j, sq, skv) {
                        continue;
                    }
                    let p = scores[i * skv + j];
                    for x in 0..d {
                        out[base + x] += p * v.value(b, hk, j, x);
                    }
                }
            }
        }
    }
    out
}

/// Attention for selected query rows only: `D` values for each `(b, h, s)`
/// of `rows`, in the order given. For shapes too large for the full
/// reference; agrees with [`attention_f64`] on every row.
///
/// # Panics
/// When the shapes are inconsistent or a row lies outside `q`.
pub fn attention_rows_f64(
    q: &Fp8Tensor,
    k: &Fp8Tensor,
    v: &Fp8Tensor,
    causal: bool,
    softmax_scale: f64,
    rows: &[(usize, usize, usize)],
) -> Vec<f64> {
    attention_rows_scored_f64(q, k, v, &ScoreRule::causal(causal), softmax_scale, rows)
}

/// [`attention_rows_f64`] with the keys and scores of `rule`.
///
/// # Panics
/// As [`attention_rows_f64`].
pub fn attention_rows_scored_f64(
    q: &Fp8Tensor,
    k: &Fp8Tensor,
    v: &Fp8Tensor,
    rule: &ScoreRule,
    softmax_scale: f64,
    rows: &[(usize, usize, usize)],
) -> Vec<f64> {
    let group = check_shapes(q, k, v);
    let [batch, hq, sq, d] = q.shape;
    let skv = k.shape[2];
    let mut out = Vec::with_capacity(rows.len() * d);
    let mut scores = Vec::with_capacity(skv);
    for &(b, h, i) in rows {
        assert!(b < batch && h < hq && i < sq, "reference: row ({b}, {h}, {i}) outside q of shape {:?}", q.shape);
        let hk = h / group;
        // The keys this row sees, and their scores.
        let keys: Vec<usize> = (0..skv).filter(|&j| rule.sees(i, j, sq, skv)).collect();
        scores.clear();
        for &j in &keys {
            let mut dot = 0.0f64;
            for x in 0..d {
                dot += q.value(b, h, i, x) * k.value(b, hk, j, x);
            }
            scores.push(rule.score(softmax_scale * dot));
        }
        let m = max_nan(&scores);
        let weights: Vec<f64> = scores.iter().map(|s| (s - m).exp()).collect();
        let l: f64 = weights.iter().sum();
        for x in 0..d {
            let mut acc = 0.0f64;
            for (w, &j) in weights.iter().zip(&keys) {
                acc += w * v.value(b, hk, j, x);
            }
            // No visible key: acc = 0 and l = 0; the row is defined as zeros.
            out.push(if keys.is_empty() { 0.0 } else { acc / l });
        }
    }
    out
}

/// Natural log of the sum of `exp(softmax_scale * q.k)` over the keys
/// query row `(h, i)` of a one-batch problem sees (bottom-right causal), on
/// the dequantized inputs in f64; `-inf` for a row that sees no key: what
/// the kernels' log-sum-exp output should hold.
pub fn log_sum_exp_f64(q: &Fp8Tensor, k: &Fp8Tensor, h: usize, i: usize, causal: bool, softmax_scale: f64) -> f64 {
    log_sum_exp_scored_f64(q, k, (h, i), &ScoreRule::causal(causal), softmax_scale)
}

/// [`log_sum_exp_f64`] of row `(h, i)` with the keys and scores of `rule`.
pub fn log_sum_exp_scored_f64(
    q: &Fp8Tensor,
    k: &Fp8Tensor,
    (h, i): (usize, usize),
    rule: &ScoreRule,
    softmax_scale: f64,
) -> f64 {
    let [_, hq, sq, d] = q.shape;
    let [_, hkv, skv, _] = k.shape;
    let hk = h / (hq / hkv);
    let value = |t: &Fp8Tensor, head: usize, row: usize, c: usize| {
        e4m3_to_f32(t.data[(head * t.shape[2] + row) * d + c]) as f64 * t.scales[head] as f64
    };
    let seen = (0..skv).filter(|&j| rule.sees(i, j, sq, skv));
    let dot = |j: usize| (0..d).map(|c| value(q, h, i, c) * value(k, hk, j, c)).sum::<f64>();
    let scores: Vec<f64> = seen.map(|j| rule.score(softmax_scale * dot(j))).collect();
    let max = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if scores.is_empty() { f64::NEG_INFINITY } else { max + scores.iter().map(|s| (s - max).exp()).sum::<f64>().ln() }
}

/// `count` query rows `(b, h, s)` of a Q of shape `shape`, drawn uniformly
/// (with replacement) from a deterministic stream seeded by `seed`. The first
/// and last rows of the tensor are always included (when `count >= 2`), as
/// they sit on tile edges.
pub fn sample_rows(shape: [usize; 4], count: usize, seed: u64) -> Vec<(usize, usize, usize)> {
    let [batch, heads, seq, _] = shape;
    let total = batch * heads * seq;
    if total == 0 {
        return Vec::new();
    }
    let split = |r: usize| (r / (heads * seq), (r / seq) % heads, r % seq);
    let mut rng = crate::quant::SplitMix64::new(seed);
    let mut rows = Vec::with_capacity(count);
    for n in 0..count {
        let r = match n {
            0 => 0,
            1 => total - 1,
            _ => rng.below(total as u64) as usize,
        };
        rows.push(split(r));
    }
    rows
}
