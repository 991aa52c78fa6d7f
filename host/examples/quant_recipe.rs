//! Which quantizer recipe keeps FP8 attention closest to float64 on the
//! unquantized inputs? A CPU experiment (the table of `lab/quantizer.md`).
//!
//! For each distribution (standard normal; FlashAttention-3's outliers,
//! N(0,1) + N(0,100)·Bernoulli(0.001), in Q, K and V alike) and head dim, it
//! quantizes Q, K and V with each recipe, runs attention in f64 on the
//! dequantized values (P·V exact, as the f16-P `wgmma`/`mma` kernels come
//! within f16 rounding of; or with P rounded to E4M3, as `wgmma-fp8pv`; or
//! with Q kept in f16, a Q·Kᵀ in f16; or, at D = 64, with Q and K spread
//! over a row 2 or 4 times as wide before they are quantized), and
//! prints the output's RMSE and relative L2 error against f64 attention on
//! the unquantized values.
//!
//! Run: `cargo run --release -p sdpa --example quant_recipe [B H S]`
//! (default 2 4 1024).

use kernels_gpu::fp8::e4m3_to_f32;
use sdpa::quant::{Rotation, ScaleGroup, SplitMix64, encode_e4m3, normal_values, quantize_as_gpu};

/// One way to quantize the three tensors.
struct Recipe {
    name: &'static str,
    group: ScaleGroup,
    /// Rotation of Q and K.
    rotation: Rotation,
    /// Random ±1 signs on each dimension of Q and K before the rotation.
    signs: bool,
    /// V rotated too, and the output rotated back (not something the
    /// kernels could do: it shows what V's own rounding costs).
    rotate_v: bool,
    /// P rounded to E4M3 before P·V (`wgmma-fp8pv`).
    p_e4m3: bool,
    /// Q (rotated as the recipe says) rounded to f16 instead of quantized:
    /// a Q·Kᵀ in f16 whose K is the E4M3 codes' values (exact in f16).
    q_f16: bool,
}

const RECIPES: [Recipe; 10] = [
    Recipe {
        name: "per head",
        group: ScaleGroup::PerHead,
        rotation: Rotation::None,
        signs: false,
        rotate_v: false,
        p_e4m3: false,
        q_f16: false,
    },
    Recipe {
        name: "per (b,h)",
        group: ScaleGroup::PerBatchHead,
        rotation: Rotation::None,
        signs: false,
        rotate_v: false,
        p_e4m3: false,
        q_f16: false,
    },
    Recipe {
        name: "per head + H(QK)",
        group: ScaleGroup::PerHead,
        rotation: Rotation::Hadamard,
        signs: false,
        rotate_v: false,
        p_e4m3: false,
        q_f16: false,
    },
    Recipe {
        name: "per head + signed H(QK)",
        group: ScaleGroup::PerHead,
        rotation: Rotation::Hadamard,
        signs: true,
        rotate_v: false,
        p_e4m3: false,
        q_f16: false,
    },
    Recipe {
        name: "per (b,h) + H(QK)",
        group: ScaleGroup::PerBatchHead,
        rotation: Rotation::Hadamard,
        signs: false,
        rotate_v: false,
        p_e4m3: false,
        q_f16: false,
    },
    Recipe {
        name: "per head, P e4m3",
        group: ScaleGroup::PerHead,
        rotation: Rotation::None,
        signs: false,
        rotate_v: false,
        p_e4m3: true,
        q_f16: false,
    },
    Recipe {
        name: "per head + H(QK), P e4m3",
        group: ScaleGroup::PerHead,
        rotation: Rotation::Hadamard,
        signs: false,
        rotate_v: false,
        p_e4m3: true,
        q_f16: false,
    },
    Recipe {
        name: "per head + H(QKV) [not buildable]",
        group: ScaleGroup::PerHead,
        rotation: Rotation::Hadamard,
        signs: false,
        rotate_v: true,
        p_e4m3: false,
        q_f16: false,
    },
    Recipe {
        name: "per head, Q f16",
        group: ScaleGroup::PerHead,
        rotation: Rotation::None,
        signs: false,
        rotate_v: false,
        p_e4m3: false,
        q_f16: true,
    },
    Recipe {
        name: "per head + H(QK), Q f16",
        group: ScaleGroup::PerHead,
        rotation: Rotation::Hadamard,
        signs: false,
        rotate_v: false,
        p_e4m3: false,
        q_f16: true,
    },
];

/// Non-causal attention in f64, V and O `[B, H, S, D]`, Q and K `[B, H, S,
/// qk_dim]` (`qk_dim = D`, or wider for a rotation over a padded row),
/// scale `1/sqrt(D)`; P rounded to E4M3 before P·V when `p_e4m3`.
fn attention(q: &[f64], k: &[f64], v: &[f64], shape: [usize; 4], qk_dim: usize, p_e4m3: bool) -> Vec<f64> {
    let [batch, heads, seq, dim] = shape;
    let scale = 1.0 / (dim as f64).sqrt();
    let mut out = vec![0.0; v.len()];
    let mut p = vec![0.0; seq];
    for slice in 0..batch * heads {
        let at = slice * seq * dim;
        let at_qk = slice * seq * qk_dim;
        let (qs, ks, vs) = (&q[at_qk..][..seq * qk_dim], &k[at_qk..][..seq * qk_dim], &v[at..][..seq * dim]);
        for i in 0..seq {
            let qi = &qs[i * qk_dim..][..qk_dim];
            for (j, pj) in p.iter_mut().enumerate() {
                *pj = scale * qi.iter().zip(&ks[j * qk_dim..][..qk_dim]).map(|(a, b)| a * b).sum::<f64>();
            }
            let m = p.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            p.iter_mut().for_each(|x| *x = (*x - m).exp());
            let l: f64 = p.iter().sum();
            if p_e4m3 {
                p.iter_mut().for_each(|x| *x = e4m3_to_f32(encode_e4m3(*x)) as f64);
            }
            let o = &mut out[at + i * dim..][..dim];
            for (j, &pj) in p.iter().enumerate() {
                for (od, vd) in o.iter_mut().zip(&vs[j * dim..][..dim]) {
                    *od += pj * vd;
                }
            }
            o.iter_mut().for_each(|x| *x /= l);
        }
    }
    out
}

/// The dequantized values of `x` under `recipe`: rotated (and signed, if the
/// recipe says so; the signs cancel in Q·Kᵀ as both carry them) when
/// `rotate`.
fn dequantized(x: &[f32], shape: [usize; 4], recipe: &Recipe, rotate: bool, signs: &[f32]) -> Vec<f64> {
    let dim = shape[3];
    let mut input = x.to_vec();
    if rotate && recipe.signs {
        input.chunks_exact_mut(dim).for_each(|row| row.iter_mut().zip(signs).for_each(|(a, s)| *a *= s));
    }
    let rotation = if rotate { recipe.rotation } else { Rotation::None };
    let (codes, scales) = quantize_as_gpu("x", &input, shape, rotation, recipe.group).expect("finite inputs quantize");
    let slice_len = shape[2] * dim;
    codes
        .iter()
        .enumerate()
        .map(|(i, &c)| {
            let slice = i / slice_len;
            let g = match recipe.group {
                ScaleGroup::PerHead => slice % shape[1],
                ScaleGroup::PerBatchHead => slice,
            };
            e4m3_to_f32(c) as f64 * scales[g] as f64
        })
        .collect()
}

/// `x` rotated as `recipe` says (no signs) and rounded to f16, not
/// quantized.
fn rounded_f16(x: &[f32], shape: [usize; 4], recipe: &Recipe) -> Vec<f64> {
    let mut rows = x.to_vec();
    if recipe.rotation == Rotation::Hadamard {
        rows.chunks_exact_mut(shape[3]).for_each(sdpa::quant::hadamard_row);
    }
    rows.iter().map(|&a| half::f16::from_f32(a).to_f64()).collect()
}

/// Each row of `x` (`dim` values) spread over `width` values by an
/// orthogonal map that Q and K share, so `Q·Kᵀ` is unchanged: random signs,
/// the row's values at every `width / dim`-th place of a zero row, the
/// normalised `width`-point Hadamard rotation, random signs again, the
/// rotation again. One rotation of a zero-padded row only repeats the
/// narrow rotation's values (the same roundings, nothing averaged); the
/// signs between two rotations mix the copies.
fn widened(x: &[f32], dim: usize, width: usize, signs: &[f32]) -> Vec<f32> {
    let step = width / dim;
    let mut out = vec![0.0; x.len() / dim * width];
    for (row, wide) in x.chunks_exact(dim).zip(out.chunks_exact_mut(width)) {
        for (i, (&a, s)) in row.iter().zip(signs).enumerate() {
            wide[i * step] = a * s;
        }
        sdpa::quant::hadamard_row(wide);
        wide.iter_mut().zip(&signs[dim..]).for_each(|(a, s)| *a *= s);
        sdpa::quant::hadamard_row(wide);
    }
    out
}

/// Rotates each row of `x` back (the normalised Hadamard matrix is its own
/// inverse), in f64.
fn unrotate(x: &mut [f64], dim: usize) {
    for row in x.chunks_exact_mut(dim) {
        sdpa::quant::hadamard_butterflies(row);
        let norm = 1.0 / (dim as f64).sqrt();
        row.iter_mut().for_each(|v| *v *= norm);
    }
}

fn main() {
    let args: Vec<usize> = std::env::args().skip(1).map(|a| a.parse().expect("B H S are integers")).collect();
    let (batch, heads, seq) = match args[..] {
        [b, h, s] => (b, h, s),
        _ => (2, 4, 1024),
    };
    println!(
        "B={batch} H={heads} S={seq}, non-causal, scale 1/sqrt(D); error of O vs f64 attention on the unquantized inputs"
    );
    println!("| distribution | D | recipe | RMSE | rel L2 |");
    println!("|---|---|---|---|---|");
    for outliers in [false, true] {
        for dim in [64, 128] {
            let shape = [batch, heads, seq, dim];
            let n = batch * heads * seq * dim;
            let mut rng = SplitMix64::new(0x5eed ^ (dim as u64) ^ ((outliers as u64) << 8));
            let (q, k, v) = (
                normal_values(n, outliers, &mut rng),
                normal_values(n, outliers, &mut rng),
                normal_values(n, outliers, &mut rng),
            );
            let signs: Vec<f32> = (0..dim).map(|_| if rng.next_u64() & 1 == 0 { 1.0 } else { -1.0 }).collect();
            let wide = |x: &[f32]| x.iter().map(|&a| a as f64).collect::<Vec<_>>();
            let reference = attention(&wide(&q), &wide(&k), &wide(&v), shape, dim, false);
            let norm = reference.iter().map(|x| x * x).sum::<f64>().sqrt();
            for recipe in &RECIPES {
                let dq = if recipe.q_f16 {
                    rounded_f16(&q, shape, recipe)
                } else {
                    dequantized(&q, shape, recipe, true, &signs)
                };
                let dk = dequantized(&k, shape, recipe, true, &signs);
                let dv = dequantized(&v, shape, recipe, recipe.rotate_v, &signs);
                let mut o = attention(&dq, &dk, &dv, shape, dim, recipe.p_e4m3);
                if recipe.rotate_v {
                    unrotate(&mut o, dim);
                }
                let err2: f64 = o.iter().zip(&reference).map(|(a, b)| (a - b) * (a - b)).sum();
                let dist = if outliers { "outlier" } else { "normal" };
                println!(
                    "| {dist} | {dim} | {} | {:.2e} | {:.2e} |",
                    recipe.name,
                    (err2 / n as f64).sqrt(),
                    err2.sqrt() / norm
                );
            }
            // Q and K rotated over a row 2 and 4 times as wide (a D = 64
            // problem run as Q·Kᵀ over 128 or 256 values): each value then
            // carries a smaller share of an outlier, and the rounding errors
            // of more values average out in the scores.
            if dim == 64 {
                let dv = dequantized(&v, shape, &RECIPES[0], false, &signs);
                for width in [2 * dim, 4 * dim] {
                    let wide_signs: Vec<f32> =
                        (0..dim + width).map(|_| if rng.next_u64() & 1 == 0 { 1.0 } else { -1.0 }).collect();
                    let wide_shape = [batch, heads, seq, width];
                    let quantize_wide = |x: &[f32]| {
                        let wide = widened(x, dim, width, &wide_signs);
                        dequantized(&wide, wide_shape, &RECIPES[0], false, &signs)
                    };
                    let o = attention(&quantize_wide(&q), &quantize_wide(&k), &dv, shape, width, false);
                    let err2: f64 = o.iter().zip(&reference).map(|(a, b)| (a - b) * (a - b)).sum();
                    let dist = if outliers { "outlier" } else { "normal" };
                    println!(
                        "| {dist} | {dim} | per head + two signed H(QK) over {width} values | {:.2e} | {:.2e} |",
                        (err2 / n as f64).sqrt(),
                        err2.sqrt() / norm
                    );
                }
            }
        }
    }
}
