//! Adversarial inputs, built by hand from E4M3 codes, and the checks that
//! judge an output on them: the documented NaN rule, zeros for rows that see
//! no key, and the f64 reference everywhere else. Shared by the CPU tests
//! (reference and emulation, `tests/adversarial.rs`) and the GPU test
//! (`tests/adversarial.rs`, ignored without a GPU).
//!
//! # The cases
//! For each head dimension, [`cases`] builds:
//! - `max-scores`: Q and K at ±448 (the E4M3 maximum) and per-head scales up
//!   to `q_scale = k_scale = 1e6`, so scores reach ~1e18 (finite in f32:
//!   `q_scale * k_scale * softmax_scale * |q·k|` stays far below 3.4e38) and
//!   the softmax is an exact arg-max, exact ties (repeated keys) included;
//! - `all-equal`: every key of a head the same, so every visible key gets
//!   the same weight (also at huge scores);
//! - `dominant-key`: each query row is a copy of one key row (the first, the
//!   last visible one, or one in the middle), so that key dominates and the
//!   online softmax must rescale what it summed before it;
//! - `scales-wide`: one head per scale triple, scales from 1e-6 to 1e2 on
//!   random normal codes (V scales stop at 1e2: 448 x 1e6 would overflow
//!   f16, whose largest value is 65504, so such an output is `inf` by
//!   rounding, not a kernel fault);
//! - `skv1`: one key (MQA, causal and not);
//! - `causal-sq-gt-skv`: causal with `Sq > Skv`, so the first `Sq - Skv`
//!   rows see no key and must be exactly zero;
//! - `nan-q`, `nan-k`, `nan-v`, `nan-all`: NaN codes (`0x7F`, `0xFF`) placed
//!   in Q, K, V, on tile edges, without and with causal masking, and with
//!   rows that see no key.
//!
//! # The NaN rule
//! The rows that read a NaN produce NaN, the others are unaffected (the
//! issue's rule, as the f64 reference in `sdpa::reference` implements it):
//! - a query row that sees at least one key and reads a NaN score (a NaN in
//!   its own Q row, or in the K row of a key it sees) is NaN in every column;
//! - a NaN in V at `[j, d]` makes column `d` NaN in every query row that sees
//!   key `j`, even where key `j`'s softmax weight is exactly 0 (`0 x NaN`);
//! - a row that sees no key is zeros, whatever its Q holds;
//! - everything else is finite and matches the reference: a NaN never leaks
//!   into a row (or column) that does not read it.
//!
//! [`nan_rule`] computes the positions from the inputs alone (no reference,
//! no kernel code). [`check_output`] holds an output to that rule.
//!
//! For Q and K this is what `torch.nn.functional.scaled_dot_product_attention`
//! does. For V the rule is stricter than torch's math backend, which forms
//! `softmax(..) @ V` with masked weights 0 and so spreads a V NaN at key `j`
//! into every row of the head (`0 x NaN`), seen or masked.
//!
//! ## Known deviation: V NaN at a masked key of a visited tile
//! Every kernel is tiled: it multiplies a whole key block of V by P; a key a row must
//! not see has `p = 0` there, and `0 x NaN = NaN`. So under causal masking a
//! NaN in V at `[j, d]` also makes column `d` NaN in rows that do *not* see
//! key `j` but whose query block visits `j`'s key block. Rows that see no
//! key at all are not affected: the epilogue writes them as exact zeros (a
//! select on the row sum, not `o x 0`).
//! [`schedule_nan`] gives exactly those extra positions for a kernel; the
//! checks allow
//! NaN there and nowhere else, and the CPU test
//! `tiled_v_nan_deviation_is_still_present` pins it so that fixing the
//! kernels (see that test) also removes the allowance.

use half::f16;
use kernels_gpu::fp8::e4m3_is_nan;
use kernels_gpu::kernels::KernelInfo;
use kernels_gpu::schedule::{blocks, key_end};
use sdpa::Fp8Tensor;
use sdpa::attention::POISON;
use sdpa::quant::{SplitMix64, from_codes, quantize_per_head, random_normal};

use crate::fuzz::judge;

/// E4M3 +448.
pub const MAX_POS: u8 = 0x7E;
/// E4M3 -448.
pub const MAX_NEG: u8 = 0xFE;
/// E4M3 NaN, sign bit clear.
pub const NAN_POS: u8 = 0x7F;
/// E4M3 NaN, sign bit set.
pub const NAN_NEG: u8 = 0xFF;

/// One adversarial problem.
#[derive(Clone, Debug)]
pub struct Case {
    /// Name, e.g. `nan-v/causal-sq100-skv70`.
    pub name: String,
    /// Q `[B, Hq, Sq, D]`.
    pub q: Fp8Tensor,
    /// K `[B, Hkv, Skv, D]`.
    pub k: Fp8Tensor,
    /// V `[B, Hkv, Skv, D]`.
    pub v: Fp8Tensor,
    /// Causal masking.
    pub causal: bool,
}

impl Case {
    /// The softmax scale the library uses by default, `1 / sqrt(D)`.
    pub fn softmax_scale(&self) -> f32 {
        1.0 / (self.q.shape[3] as f32).sqrt()
    }

    /// Whether any input holds a NaN code.
    pub fn has_nan(&self) -> bool {
        [&self.q, &self.k, &self.v].iter().any(|t| t.data.iter().any(|&c| e4m3_is_nan(c)))
    }

    /// `Hq / Hkv`.
    fn group(&self) -> usize {
        self.q.shape[1] / self.k.shape[1]
    }
}

/// Flat index of `[b, h, s, d]` in a tensor of `shape`.
pub fn index(shape: [usize; 4], b: usize, h: usize, s: usize, d: usize) -> usize {
    ((b * shape[1] + h) * shape[2] + s) * shape[3] + d
}

/// How many keys query `i` sees; they are always keys `0 .. n` (the
/// bottom-right aligned causal mask, written here from the definition, not
/// taken from `kernels-gpu`).
pub fn keys_seen(causal: bool, i: usize, sq: usize, skv: usize) -> usize {
    if causal { (i as i64 + skv as i64 - sq as i64 + 1).clamp(0, skv as i64) as usize } else { skv }
}

/// Per query row `[B, Hq, Sq]` (flat): whether the row sees no key.
pub fn rows_seeing_no_key(case: &Case) -> Vec<bool> {
    let [batch, heads, sq, _] = case.q.shape;
    let skv = case.k.shape[2];
    let mut out = Vec::with_capacity(batch * heads * sq);
    for _ in 0..batch * heads {
        out.extend((0..sq).map(|i| keys_seen(case.causal, i, sq, skv) == 0));
    }
    out
}

/// NaN codes of one (batch, K/V head) as prefix ORs over the keys: entry
/// `n` says whether keys `0 .. n` hold a NaN (`k[n]`: in any K element;
/// `v[n][d]`: in V column `d`).
struct NanPrefix {
    k: Vec<bool>,
    v: Vec<Vec<bool>>,
}

impl NanPrefix {
    fn new(case: &Case, b: usize, kvh: usize) -> NanPrefix {
        let ks = case.k.shape;
        let [_, _, skv, dim] = ks;
        let mut k = vec![false; skv + 1];
        let mut v = vec![vec![false; dim]; skv + 1];
        for j in 0..skv {
            let at = index(ks, b, kvh, j, 0);
            k[j + 1] = k[j] || case.k.data[at..at + dim].iter().any(|&c| e4m3_is_nan(c));
            let next: Vec<bool> = (0..dim).map(|d| v[j][d] || e4m3_is_nan(case.v.data[at + d])).collect();
            v[j + 1] = next;
        }
        NanPrefix { k, v }
    }
}

/// The NaN rule (module docs): for every output element `[B, Hq, Sq, D]`,
/// whether it must be NaN. From the inputs alone.
pub fn nan_rule(case: &Case) -> Vec<bool> {
    let [batch, hq, sq, dim] = case.q.shape;
    let skv = case.k.shape[2];
    let group = case.group();
    let qs = case.q.shape;
    let mut out = vec![false; batch * hq * sq * dim];
    if !case.has_nan() {
        return out;
    }
    for b in 0..batch {
        for kvh in 0..hq / group {
            let nan = NanPrefix::new(case, b, kvh);
            for h in kvh * group..(kvh + 1) * group {
                for i in 0..sq {
                    let n = keys_seen(case.causal, i, sq, skv);
                    if n == 0 {
                        continue;
                    }
                    let at = index(qs, b, h, i, 0);
                    let row_nan = nan.k[n] || case.q.data[at..at + dim].iter().any(|&c| e4m3_is_nan(c));
                    for d in 0..dim {
                        out[at + d] = row_nan || nan.v[n][d];
                    }
                }
            }
        }
    }
    out
}

/// The keys `0 .. end` that `kernel`'s schedule multiplies into query row
/// `row`'s P·V (masked ones included, with weight 0), as `emulate` models
/// the tiled schedule: the query block of `block_m` rows walks whole
/// `block_n`-key blocks up to the block's `key_end`, keys past `Skv`
/// zero-filled.
pub fn schedule_keys_end(kernel: &KernelInfo, row: usize, sq: usize, skv: usize, causal: bool) -> usize {
    let (row, sq, skv) = (row as u32, sq as u32, skv as u32);
    let t = kernel.tiles;
    let row0 = row / t.block_m * t.block_m;
    (blocks(key_end(row0, t.block_m, sq, skv, causal), t.block_n) * t.block_n).min(skv) as usize
}

/// The keys whose V rows `decode` (`kernel`) multiplies into query row `row`
/// with a weight that is not dropped: the key blocks of every key group
/// that sees one of the row's keys in the split holding its last key (the
/// earlier splits' keys are all the row's; a group or split that sees none
/// weighs 0 in the merges, and a 0 weight is skipped, not multiplied).
pub fn decode_keys_read(kernel: &KernelInfo, case: &Case, row: usize) -> Vec<usize> {
    let [_, _, sq, _] = case.q.shape;
    let skv = case.k.shape[2];
    let seen = keys_seen(case.causal, row, sq, skv);
    let (_, split_keys) = crate::emulate::decode_splits(kernel, case.q.shape, case.k.shape);
    let (split_keys, t) = (split_keys as usize, kernel.tiles);
    let (block_n, groups) = (t.block_n as usize, t.splits as usize);
    let begin = (seen - 1) / split_keys * split_keys;
    let keys = (begin + split_keys).min(skv) - begin;
    let blocks = keys.div_ceil(block_n);
    (0..groups.min(blocks))
        .filter(|g| begin + g * block_n < seen)
        .flat_map(|g| (g..blocks).step_by(groups))
        .flat_map(|j| begin + j * block_n..(begin + (j + 1) * block_n).min(skv))
        .collect()
}

/// The positions where `kernel` may put a NaN that the rule does not ask
/// for: column `d` of a row whose schedule multiplies a NaN V value at
/// `[j, d]` (with weight 0) for a key `j` the row does not see. See the
/// module docs ("Known deviation").
pub fn schedule_nan(kernel: &KernelInfo, case: &Case) -> Vec<bool> {
    let rule = nan_rule(case);
    let mut out = vec![false; rule.len()];
    if !case.has_nan() {
        return out;
    }
    let [batch, hq, sq, dim] = case.q.shape;
    let skv = case.k.shape[2];
    let group = case.group();
    for b in 0..batch {
        for kvh in 0..hq / group {
            let nan = NanPrefix::new(case, b, kvh);
            for h in kvh * group..(kvh + 1) * group {
                for i in 0..sq {
                    // A row that sees no key is written as exact zeros.
                    if key_end(i as u32, 1, sq as u32, skv as u32, case.causal) == 0 {
                        continue;
                    }
                    let at = index(case.q.shape, b, h, i, 0);
                    if kernel.merge.is_some() {
                        for key in decode_keys_read(kernel, case, i) {
                            let v = index(case.k.shape, b, kvh, key, 0);
                            for d in 0..dim {
                                out[at + d] |= !rule[at + d] && e4m3_is_nan(case.v.data[v + d]);
                            }
                        }
                        continue;
                    }
                    let end = schedule_keys_end(kernel, i, sq, skv, case.causal);
                    for d in 0..dim {
                        out[at + d] = !rule[at + d] && nan.v[end][d];
                    }
                }
            }
        }
    }
    out
}

/// Tolerances for the finite part of an output, relative to each head's
/// largest |reference| value (as `fuzz::judge`).
#[derive(Clone, Copy, Debug)]
pub struct Tolerance {
    /// Largest relative L2 error per (batch, head).
    pub rel_l2: f64,
    /// Largest absolute error over the head's largest |reference|.
    pub max_rel: f64,
}

/// What [`check_output`] found.
#[derive(Clone, Debug, Default)]
pub struct Report {
    /// Everything that broke a rule, one line each (the first few listed).
    pub failures: Vec<String>,
    /// Elements NaN by the rule (and NaN in the output).
    pub rule_nan: usize,
    /// Elements NaN only by the schedule's allowance ([`schedule_nan`]).
    pub schedule_nan: usize,
    /// Rows that see no key (checked to be exactly zero).
    pub zero_rows: usize,
    /// The worst relative L2 error of a head's finite elements.
    pub worst_rel_l2: f64,
}

impl Report {
    /// Whether nothing broke a rule.
    pub fn ok(&self) -> bool {
        self.failures.is_empty()
    }
}

impl std::fmt::Display for Report {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: nan(rule)={} nan(schedule)={} zero_rows={} worst_rel_l2={:.1e}",
            if self.ok() { "ok" } else { "FAIL" },
            self.rule_nan,
            self.schedule_nan,
            self.zero_rows,
            self.worst_rel_l2
        )?;
        for line in &self.failures {
            write!(f, "\n    {line}")?;
        }
        Ok(())
    }
}

/// Failure lines kept per report.
const MAX_LINES: usize = 8;

/// Holds `out` (`[B, Hq, Sq, D]`, f16) to the rules of the module docs:
/// - every position of [`nan_rule`] is NaN, and not the poison's bit
///   pattern (a NaN the kernel wrote, not one it left behind);
/// - no other position is NaN or infinite, except those in `allowed_nan`
///   (the schedule's known deviation; `None`: none allowed);
/// - rows that see no key are exactly zero (either sign);
/// - per (batch, head), the remaining elements are within `tol` of
///   `reference`.
pub fn check_output(
    case: &Case,
    out: &[f16],
    reference: &[f64],
    allowed_nan: Option<&[bool]>,
    tol: Tolerance,
) -> Report {
    let rule = nan_rule(case);
    let no_key = rows_seeing_no_key(case);
    let [batch, hq, sq, dim] = case.q.shape;
    assert_eq!(out.len(), rule.len(), "{}: output length", case.name);
    assert_eq!(reference.len(), rule.len(), "{}: reference length", case.name);
    let mut report = Report::default();
    let mut lines = 0usize;
    let mut fail = |report: &mut Report, msg: String| {
        lines += 1;
        if lines <= MAX_LINES {
            report.failures.push(msg);
        } else if lines == MAX_LINES + 1 {
            report.failures.push("(more failures not listed)".into());
        }
    };
    for b in 0..batch {
        for h in 0..hq {
            let (mut got, mut want) = (Vec::new(), Vec::new());
            for i in 0..sq {
                let row = (b * hq + h) * sq + i;
                report.zero_rows += no_key[row] as usize;
                for d in 0..dim {
                    let at = row * dim + d;
                    let (o, allowed) = (out[at], allowed_nan.is_some_and(|a| a[at]));
                    let pos = format!("[{b}, {h}, {i}, {d}]");
                    if rule[at] {
                        if !o.is_nan() {
                            fail(&mut report, format!("{pos}: {o} where the NaN rule asks for NaN"));
                        } else if o.to_bits() == POISON {
                            fail(&mut report, format!("{pos}: still holds the poison (never written)"));
                        } else {
                            report.rule_nan += 1;
                        }
                    } else if o.is_nan() && allowed {
                        report.schedule_nan += 1;
                    } else if !o.is_finite() {
                        let what =
                            if o.to_bits() == POISON { "the poison (never written)".into() } else { o.to_string() };
                        fail(&mut report, format!("{pos}: {what} where the reference is {}", reference[at]));
                    } else if no_key[row] {
                        if o.to_f32() != 0.0 {
                            fail(&mut report, format!("{pos}: {o} in a row that sees no key (must be 0)"));
                        }
                    } else {
                        got.push(o.to_f32());
                        want.push(reference[at]);
                    }
                }
            }
            if !got.is_empty() {
                let (stats, ok) = judge(&got, &want, tol.rel_l2, tol.max_rel);
                report.worst_rel_l2 = report.worst_rel_l2.max(stats.rel_l2);
                if !ok {
                    fail(&mut report, format!("head [{b}, {h}]: {stats} (tolerance {tol:?})"));
                }
            }
        }
    }
    report
}

/// Whether `e` says the device cannot run the variant at all (the library's
/// "variant .. is not available here" error, e.g. an sm_90a-only kernel on
/// an sm_89 GPU): GPU tests skip such a kernel, saying so, rather than fail.
pub fn unavailable(e: &sdpa::AttnError) -> bool {
    e.to_string().contains("is not available here")
}

// ---------------------------------------------------------------------------
// Builders.

/// Random normal values quantized per head by amax (as the seeds' inputs).
fn normal_codes(shape: [usize; 4], seed: u64) -> Fp8Tensor {
    quantize_per_head(&random_normal(shape, seed), shape).expect("finite values quantize")
}

/// Codes from `f(b, h, s, d)`, one scale per head.
fn codes_from(shape: [usize; 4], scales: &[f32], mut f: impl FnMut(usize, usize, usize, usize) -> u8) -> Fp8Tensor {
    assert_eq!(scales.len(), shape[1], "one scale per head");
    let [batch, heads, seq, dim] = shape;
    let mut data = Vec::with_capacity(shape.iter().product());
    for b in 0..batch {
        for h in 0..heads {
            for s in 0..seq {
                for d in 0..dim {
                    data.push(f(b, h, s, d));
                }
            }
        }
    }
    from_codes(data, shape, scales.to_vec())
}

/// `t` with every head's scale replaced by `scales`.
fn rescaled(mut t: Fp8Tensor, scales: &[f32]) -> Fp8Tensor {
    assert_eq!(scales.len(), t.shape[1], "one scale per head");
    t.scales = scales.to_vec();
    t
}

/// `+448` or `-448`, at random.
fn max_code(rng: &mut SplitMix64) -> u8 {
    if rng.next_u64() & 1 == 0 { MAX_POS } else { MAX_NEG }
}

/// The case name with its masking: `name`, `name/causal` or
/// `name/causal-sq{Sq}-skv{Skv}` when the lengths differ.
fn label(name: &str, causal: bool, sq: usize, skv: usize) -> String {
    match (causal, sq == skv) {
        (false, _) => name.to_string(),
        (true, true) => format!("{name}/causal"),
        (true, false) => format!("{name}/causal-sq{sq}-skv{skv}"),
    }
}

/// Q and K at ±448. K rows have random signs, except that every fifth key
/// from 64 on repeats the key 64 before it (across the 64-key tile edge);
/// each Q row is a copy of one key it sees. Its score, `D * 448^2` times
/// the scales, beats every other key's by at least `2 * 448^2` in the dot
/// product, except that a row aiming at a repeated key sees an exact tie
/// (its weight splits evenly). A tie of identical rows is bit-exact in any
/// kernel (same inputs, same operations), even with reduced-precision
/// accumulation, and every margin is far beyond rounding. Per-head scales up
/// to 1e6 x 1e6 (exact in binary): scores up to ~1e18 (D = 128), an exact
/// arg-max; head 1 (1e-6 x 1) has scores within a few nats instead.
fn max_scores(dim: usize, causal: bool, seed: u64) -> Case {
    let (batch, hq, hkv, sq, skv) = (1, 4, 2, 70, 130);
    let ks = [batch, hkv, skv, dim];
    let mut rng = SplitMix64::new(seed);
    let mut k = codes_from(ks, &[1.0, 1e6], |_, _, _, _| max_code(&mut rng));
    for h in 0..hkv {
        for j in (64..skv).filter(|j| j % 5 == 0) {
            for d in 0..dim {
                k.data[index(ks, 0, h, j, d)] = k.data[index(ks, 0, h, j - 64, d)];
            }
        }
    }
    let q = codes_from([batch, hq, sq, dim], &[1e6, 1e-6, 1e6, 1.0], |b, h, s, d| {
        let seen = if causal { s + skv - sq + 1 } else { skv }; // Sq <= Skv: every row sees a key
        k.data[index(ks, b, h / 2, (s * 7 + h) % seen, d)]
    });
    let v = rescaled(normal_codes([batch, hkv, skv, dim], seed ^ 0x7777), &[1e-2, 1e2]);
    Case { name: label("max-scores", causal, sq, skv), q, k, v, causal }
}

/// All keys of a head identical, so every visible key has the same score:
/// head 0 with random normal Q and K, head 1 with ±448 Q and K at scales
/// 1e3 x 1e3 (equal *huge* scores).
fn all_equal(dim: usize, causal: bool, seed: u64) -> Case {
    let (batch, heads, sq, skv) = (2, 2, 65, 129);
    let normal_q = normal_codes([batch, 1, sq, dim], seed);
    let normal_k = normal_codes([1, 1, 1, dim], seed ^ 1);
    let mut rng = SplitMix64::new(seed ^ 2);
    let key_row: Vec<u8> = (0..dim).map(|_| max_code(&mut rng)).collect();
    let q = codes_from([batch, heads, sq, dim], &[normal_q.scales[0], 1e3], |b, h, s, d| {
        if h == 0 { normal_q.data[index([batch, 1, sq, dim], b, 0, s, d)] } else { max_code(&mut rng) }
    });
    let k = codes_from([batch, heads, skv, dim], &[normal_k.scales[0], 1e3], |_, h, _, d| {
        if h == 0 { normal_k.data[d] } else { key_row[d] }
    });
    let v = normal_codes([batch, heads, skv, dim], seed ^ 3);
    Case { name: label("all-equal", causal, sq, skv), q, k, v, causal }
}

/// Each query row is a copy of one key row: key 0, the last key the row
/// sees, or one in the middle (by row). The Q scale puts the dominant
/// score ~60 nats above the mean, so the other keys' weights are tiny but
/// not all zero; when the dominant key comes last, the online softmax must
/// scale down everything it summed before.
fn dominant_key(dim: usize, causal: bool, seed: u64) -> Case {
    let (batch, hq, hkv, sq, skv) = (1, 2, 1, 130, 130);
    let k = normal_codes([batch, hkv, skv, dim], seed);
    let mean_sq: f64 =
        k.data.iter().map(|&c| (kernels_gpu::fp8::e4m3_to_f32(c) as f64).powi(2)).sum::<f64>() / k.data.len() as f64;
    // softmax_scale * q_scale * k_scale * D * mean_sq = 60.
    let q_scale = (60.0 * (dim as f64).sqrt() / (k.scales[0] as f64 * dim as f64 * mean_sq)) as f32;
    let ks = k.shape;
    let q = codes_from([batch, hq, sq, dim], &[q_scale, q_scale], |b, h, s, d| {
        let last = if causal { s } else { skv - 1 };
        let key = match (s + h) % 3 {
            0 => 0,
            1 => last,
            _ => last / 2,
        };
        k.data[index(ks, b, 0, key, d)]
    });
    let v = normal_codes([batch, hkv, skv, dim], seed ^ 9);
    Case { name: label("dominant-key", causal, sq, skv), q, k, v, causal }
}

/// One head per (q, k, v) scale triple, on random normal codes: scales from
/// 1e-6 to 1e2. `q_scale * k_scale` stays <= 1e-3 with codes up to 448, so
/// the scores stay within ~±10 nats: the test is the scales' range, not an
/// arg-max (see `max-scores` for that).
fn scales_wide(dim: usize, causal: bool, seed: u64) -> Case {
    const TRIPLES: [(f32, f32, f32); 6] = [
        (1e-6, 1e-6, 1e-6),
        (1e-6, 1e2, 1e2),
        (1e2, 1e-6, 1e-4),
        (1e-3, 1e-1, 1e-2),
        (1e-1, 1e-2, 1.0),
        (3e-5, 3e-5, 1e1),
    ];
    let (batch, heads, sq, skv) = (1, TRIPLES.len(), 70, if causal { 100 } else { 70 });
    let q = rescaled(normal_codes([batch, heads, sq, dim], seed), &TRIPLES.map(|t| t.0));
    let k = rescaled(normal_codes([batch, heads, skv, dim], seed ^ 1), &TRIPLES.map(|t| t.1));
    let v = rescaled(normal_codes([batch, heads, skv, dim], seed ^ 2), &TRIPLES.map(|t| t.2));
    Case { name: label("scales-wide", causal, sq, skv), q, k, v, causal }
}

/// Skv = 1 under MQA (Hkv = 1): every row's output is V's one row, or (causal)
/// zeros for every row but the last.
fn skv1(dim: usize, causal: bool, seed: u64) -> Case {
    let (batch, hq, sq) = (2, 4, 70);
    let q = normal_codes([batch, hq, sq, dim], seed);
    let k = normal_codes([batch, 1, 1, dim], seed ^ 1);
    let v = normal_codes([batch, 1, 1, dim], seed ^ 2);
    Case { name: label("skv1", causal, sq, 1), q, k, v, causal }
}

/// Causal with Sq = 150 > Skv = 40: rows 0..110 see no key (a whole query
/// block of `mma` and part of the next).
fn causal_sq_gt_skv(dim: usize, seed: u64) -> Case {
    let (batch, heads, sq, skv) = (1, 2, 150, 40);
    let q = normal_codes([batch, heads, sq, dim], seed);
    let k = normal_codes([batch, heads, skv, dim], seed ^ 1);
    let v = normal_codes([batch, heads, skv, dim], seed ^ 2);
    Case { name: label("causal-sq-gt-skv", true, sq, skv), q, k, v, causal: true }
}

/// Where the NaN cases put NaN codes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum NanIn {
    Q,
    K,
    V,
    All,
}

/// Random normal inputs (B = 2, Hq = 4, Hkv = 2, Skv = 70) with NaN codes
/// on tile edges, in batch 0 and (V) batch 1, so that other batches and
/// heads show whether a NaN leaks: Q rows 0 (sees key 0 only when causal
/// and square; nothing when Sq > Skv), 5 and 66 of batch 0; K rows 10 and 69
/// (the last key) of batch 0, K/V head 0; V at `[10, 5]`, `[64, 1]` (first
/// key of the second 64-key block) and `[69, D - 1]` of batch 0, K/V head 0,
/// and at `[3, 2]` of batch 1, K/V head 1 (query heads 2 and 3).
fn nan_case(dim: usize, what: NanIn, causal: bool, sq: usize, seed: u64) -> Case {
    let (batch, hq, hkv, skv) = (2, 4, 2, 70);
    let mut q = normal_codes([batch, hq, sq, dim], seed);
    let mut k = normal_codes([batch, hkv, skv, dim], seed ^ 1);
    let mut v = normal_codes([batch, hkv, skv, dim], seed ^ 2);
    let (qs, ks) = (q.shape, k.shape);
    if matches!(what, NanIn::Q | NanIn::All) {
        q.data[index(qs, 0, 1, 0, dim - 1)] = NAN_POS;
        q.data[index(qs, 0, 0, 5, 3)] = NAN_POS;
        q.data[index(qs, 0, 1, 66, 0)] = NAN_NEG;
    }
    if matches!(what, NanIn::K | NanIn::All) {
        k.data[index(ks, 0, 0, 10, 7)] = NAN_POS;
        k.data[index(ks, 0, 0, 69, 0)] = NAN_NEG;
    }
    if matches!(what, NanIn::V | NanIn::All) {
        v.data[index(ks, 0, 0, 10, 5)] = NAN_POS;
        v.data[index(ks, 0, 0, 64, 1)] = NAN_NEG;
        v.data[index(ks, 0, 0, 69, dim - 1)] = NAN_POS;
        v.data[index(ks, 1, 1, 3, 2)] = NAN_NEG;
    }
    let name = match what {
        NanIn::Q => "nan-q",
        NanIn::K => "nan-k",
        NanIn::V => "nan-v",
        NanIn::All => "nan-all",
    };
    Case { name: label(name, causal, sq, skv), q, k, v, causal }
}

/// Every adversarial case for head dimension `dim` (64 or 128), deterministic.
pub fn cases(dim: usize) -> Vec<Case> {
    let seed = dim as u64;
    let mut out = Vec::new();
    for causal in [false, true] {
        out.push(max_scores(dim, causal, seed));
        out.push(all_equal(dim, causal, seed + 1));
        out.push(dominant_key(dim, causal, seed + 2));
        out.push(scales_wide(dim, causal, seed + 3));
        out.push(skv1(dim, causal, seed + 4));
    }
    out.push(causal_sq_gt_skv(dim, seed + 5));
    for what in [NanIn::Q, NanIn::K, NanIn::V, NanIn::All] {
        for (causal, sq) in [(false, 70), (true, 70), (true, 100)] {
            out.push(nan_case(dim, what, causal, sq, seed + 6));
        }
    }
    out
}
