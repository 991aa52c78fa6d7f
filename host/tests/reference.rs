//! The f64 reference against hand formulas on tiny cases.

use sdpa::Fp8Tensor;
use sdpa::quant::{encode_e4m3, from_codes, random_problem};
use sdpa::reference::{attention_f64, attention_rows_f64, sample_rows};

/// A tensor from exact values (each must be an E4M3 value) with scale 1.
fn exact(shape: [usize; 4], values: &[f64]) -> Fp8Tensor {
    assert_eq!(values.len(), shape.iter().product::<usize>());
    let data = values
        .iter()
        .map(|&x| {
            let c = encode_e4m3(x);
            assert_eq!(kernels_gpu::fp8::e4m3_to_f32(c) as f64, x, "{x} is not an E4M3 value");
            c
        })
        .collect();
    from_codes(data, shape, vec![1.0; shape[1]])
}

fn assert_close(got: &[f64], want: &[f64], tol: f64) {
    assert_eq!(got.len(), want.len());
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!((g - w).abs() <= tol, "element {i}: got {g}, want {w}\n got {got:?}\nwant {want:?}");
    }
}

#[test]
fn one_key_gives_its_value_row() {
    // Whatever Q and the scale, softmax over one key is 1.
    let q = exact([1, 1, 3, 4], &[1.0, -2.0, 0.5, 3.0, 0.0, 0.0, 0.0, 0.0, 448.0, 448.0, -448.0, 1.0]);
    let k = exact([1, 1, 1, 4], &[0.25, 1.0, -1.0, 2.0]);
    let v = exact([1, 1, 1, 4], &[1.5, -3.0, 0.125, 7.0]);
    for scale in [0.5, 1.0, 10.0] {
        let o = attention_f64(&q, &k, &v, false, scale);
        assert_close(&o, &[1.5, -3.0, 0.125, 7.0].repeat(3), 0.0);
    }
}

#[test]
fn two_keys_with_known_scores() {
    // q = [1, 2], k0 = [1, 0] -> dot 1, k1 = [0, 1] -> dot 2; scale 0.5:
    // scores 0.5 and 1.0, p1 = 1 / (1 + e^-0.5), p0 = 1 - p1.
    let q = exact([1, 1, 1, 2], &[1.0, 2.0]);
    let k = exact([1, 1, 2, 2], &[1.0, 0.0, 0.0, 1.0]);
    let v = exact([1, 1, 2, 2], &[4.0, -1.0, 0.0, 3.0]);
    let p1 = 1.0 / (1.0 + (-0.5f64).exp());
    let p0 = 1.0 - p1;
    let want = [p0 * 4.0 + p1 * 0.0, -p0 + p1 * 3.0];
    assert_close(&attention_f64(&q, &k, &v, false, 0.5), &want, 1e-15);
    // Scale 0 gives the plain mean of the values.
    assert_close(&attention_f64(&q, &k, &v, false, 0.0), &[2.0, 1.0], 1e-15);
}

#[test]
fn large_scores_are_stable() {
    // Scores of 448*448*2 would overflow exp() without subtracting the max.
    let q = exact([1, 1, 1, 2], &[448.0, 448.0]);
    let k = exact([1, 1, 2, 2], &[448.0, 448.0, 416.0, 448.0]);
    let v = exact([1, 1, 2, 2], &[1.0, 2.0, 3.0, 4.0]);
    let o = attention_f64(&q, &k, &v, false, 1.0);
    // Score gap 448*32 = 14336: key 0 takes everything.
    assert_close(&o, &[1.0, 2.0], 0.0);
}

#[test]
fn dequantization_scales_are_applied() {
    // q scale 2, k scale 0.5, v scale 3: scores q.k * 1 and values * 3.
    let mut q = exact([1, 1, 1, 1], &[1.0]);
    let mut k = exact([1, 1, 2, 1], &[1.0, 2.0]);
    let mut v = exact([1, 1, 2, 1], &[1.0, -1.0]);
    q.scales = vec![2.0];
    k.scales = vec![0.5];
    v.scales = vec![3.0];
    // scores: 2*0.5*1 = 1, 2*1 = 2 (times softmax scale 1).
    let p1 = 1.0 / (1.0 + (-1.0f64).exp());
    let want = 3.0 * (1.0 - p1) - 3.0 * p1;
    assert_close(&attention_f64(&q, &k, &v, false, 1.0), &[want], 1e-15);
}

/// V rows 0..n as [j+1, -(j+1)*2] so that every mean is distinguishable.
fn ramp_v(n: usize) -> Fp8Tensor {
    let vals: Vec<f64> = (0..n).flat_map(|j| [(j + 1) as f64, -2.0 * (j + 1) as f64]).collect();
    exact([1, 1, n, 2], &vals)
}

fn mean_of_first(n: usize) -> [f64; 2] {
    // mean of 1..=n is (n+1)/2
    let m = (n + 1) as f64 / 2.0;
    [m, -2.0 * m]
}

#[test]
fn causal_with_fewer_queries_than_keys_aligns_bottom_right() {
    // Sq = 2, Skv = 4, Q = 0 (uniform weights over visible keys):
    // row 0 sees keys 0..=2, row 1 sees keys 0..=3.
    let q = exact([1, 1, 2, 2], &[0.0; 4]);
    let k = exact([1, 1, 4, 2], &[1.0, 2.0, -1.0, 0.5, 3.0, 3.0, 0.25, -4.0]);
    let v = ramp_v(4);
    let want: Vec<f64> = [mean_of_first(3), mean_of_first(4)].concat();
    assert_close(&attention_f64(&q, &k, &v, true, 1.0), &want, 1e-15);
    // Non-causal: both rows see all four keys.
    let want: Vec<f64> = [mean_of_first(4), mean_of_first(4)].concat();
    assert_close(&attention_f64(&q, &k, &v, false, 1.0), &want, 1e-15);
}

#[test]
fn causal_with_more_queries_than_keys_gives_zero_rows() {
    // Sq = 4, Skv = 2: query i sees key j iff j <= i - 2.
    // Rows 0 and 1 see nothing (zeros), row 2 sees key 0, row 3 keys 0..=1.
    let q = exact([1, 1, 4, 2], &[0.0; 8]);
    let k = exact([1, 1, 2, 2], &[1.0, 2.0, -1.0, 0.5]);
    let v = ramp_v(2);
    let want: Vec<f64> = [[0.0, 0.0], [0.0, 0.0], mean_of_first(1), mean_of_first(2)].concat();
    let o = attention_f64(&q, &k, &v, true, 1.0);
    assert_close(&o, &want, 1e-15);
    assert!(o.iter().all(|x| !x.is_nan()));
}

#[test]
fn causal_square_is_lower_triangular() {
    let q = exact([1, 1, 3, 2], &[0.0; 6]);
    let k = exact([1, 1, 3, 2], &[0.0; 6]);
    let v = ramp_v(3);
    let want: Vec<f64> = [mean_of_first(1), mean_of_first(2), mean_of_first(3)].concat();
    assert_close(&attention_f64(&q, &k, &v, true, 1.0), &want, 1e-15);
}

#[test]
fn gqa_query_head_reads_kv_head_h_over_group() {
    // Hq = 6, Hkv = 2: heads 0..3 read kv head 0, heads 3..6 read kv head 1.
    // One key per kv head, so each output row is that head's V row.
    let q = exact([1, 6, 1, 2], &[1.0; 12]);
    let k = exact([1, 2, 1, 2], &[1.0, 1.0, -1.0, 2.0]);
    let v = exact([1, 2, 1, 2], &[10.0, 20.0, -30.0, 40.0]);
    let o = attention_f64(&q, &k, &v, false, 1.0);
    let want: Vec<f64> = [[10.0, 20.0]; 3].into_iter().chain([[-30.0, 40.0]; 3]).flatten().collect();
    assert_close(&o, &want, 0.0);
}

#[test]
fn gqa_uses_the_right_keys_and_batches() {
    // B = 2, Hq = 2, Hkv = 1 (MQA), two keys; each batch has its own K/V.
    // q head 0 = [1, 0], head 1 = [0, 1]; k0 = [2, 0], k1 = [0, 2] (batch 0),
    // swapped in batch 1. Scale 1: scores (2, 0) or (0, 2).
    let q = exact([2, 2, 1, 2], &[1.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 1.0]);
    let k = exact([2, 1, 2, 2], &[2.0, 0.0, 0.0, 2.0, 0.0, 2.0, 2.0, 0.0]);
    let v = exact([2, 1, 2, 2], &[1.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 1.0]);
    let hi = 1.0 / (1.0 + (-2.0f64).exp());
    let lo = 1.0 - hi;
    let want = [hi, lo, lo, hi, lo, hi, hi, lo];
    assert_close(&attention_f64(&q, &k, &v, false, 1.0), &want, 1e-15);
}

#[test]
fn rows_function_equals_full_function() {
    for (q_shape, kv_shape, causal) in [
        ([2, 4, 7, 16], [2, 2, 13, 16], true),
        ([2, 4, 13, 16], [2, 2, 7, 16], true),
        ([1, 3, 9, 8], [1, 1, 9, 8], false),
        ([1, 2, 5, 64], [1, 2, 5, 64], true),
    ] {
        let (q, k, v) = random_problem(q_shape, kv_shape, 11);
        let scale = 1.0 / (q_shape[3] as f64).sqrt();
        let full = attention_f64(&q, &k, &v, causal, scale);
        let [b_, h_, s_, d] = q_shape;
        let rows: Vec<_> = (0..b_)
            .flat_map(|b| (0..h_).flat_map(move |h| (0..s_).map(move |s| (b, h, s))))
            .rev() // any order: the output follows the list
            .collect();
        let got = attention_rows_f64(&q, &k, &v, causal, scale, &rows);
        assert_eq!(got.len(), rows.len() * d);
        for (n, &(b, h, s)) in rows.iter().enumerate() {
            let base = ((b * h_ + h) * s_ + s) * d;
            assert_close(&got[n * d..(n + 1) * d], &full[base..base + d], 1e-12);
        }
    }
}

#[test]
fn sampled_rows_cover_the_corners_and_stay_in_range() {
    let shape = [3, 5, 17, 64];
    let rows = sample_rows(shape, 50, 1);
    assert_eq!(rows.len(), 50);
    assert_eq!(rows[0], (0, 0, 0));
    assert_eq!(rows[1], (2, 4, 16));
    assert!(rows.iter().all(|&(b, h, s)| b < 3 && h < 5 && s < 17));
    assert_eq!(rows, sample_rows(shape, 50, 1));
    assert_ne!(rows, sample_rows(shape, 50, 2));
}

const NAN: u8 = 0x7F;

#[test]
fn nan_in_q_poisons_only_its_row() {
    let (mut q, k, v) = random_problem([1, 1, 3, 8], [1, 1, 4, 8], 5);
    q.data[8 + 3] = NAN; // row 1
    let o = attention_f64(&q, &k, &v, false, 0.3);
    assert!(o[..8].iter().all(|x| x.is_finite()));
    assert!(o[8..16].iter().all(|x| x.is_nan()));
    assert!(o[16..].iter().all(|x| x.is_finite()));
}

#[test]
fn nan_in_k_poisons_the_rows_that_see_that_key() {
    // Causal, Sq = Skv = 3: key 1 is seen by rows 1 and 2, not row 0.
    let (q, mut k, v) = random_problem([1, 1, 3, 8], [1, 1, 3, 8], 5);
    k.data[8] = NAN; // key 1
    let o = attention_f64(&q, &k, &v, true, 0.3);
    assert!(o[..8].iter().all(|x| x.is_finite()));
    assert!(o[8..].iter().all(|x| x.is_nan()));
}

#[test]
fn nan_in_v_poisons_its_column_even_with_zero_weight() {
    // Key 1's score is hugely below key 0's, so its weight underflows to 0;
    // 0 * NaN is still NaN (as in torch), in column 0 only.
    let q = exact([1, 1, 1, 2], &[448.0, 0.0]);
    let k = exact([1, 1, 2, 2], &[448.0, 0.0, -448.0, 0.0]);
    let mut v = exact([1, 1, 2, 2], &[1.0, 2.0, 3.0, 4.0]);
    v.data[2] = NAN; // key 1, dim 0
    let o = attention_f64(&q, &k, &v, false, 1.0);
    assert!(o[0].is_nan());
    assert_eq!(o[1], 2.0);
    let rows = attention_rows_f64(&q, &k, &v, false, 1.0, &[(0, 0, 0)]);
    assert!(rows[0].is_nan());
    assert_eq!(rows[1], 2.0);
}

#[test]
fn nan_in_v_stays_out_of_rows_that_cannot_see_it() {
    // Causal, Sq = Skv = 2: row 0 does not see key 1.
    let q = exact([1, 1, 2, 1], &[1.0, 1.0]);
    let k = exact([1, 1, 2, 1], &[1.0, 1.0]);
    let mut v = exact([1, 1, 2, 1], &[5.0, 6.0]);
    v.data[1] = NAN;
    let o = attention_f64(&q, &k, &v, true, 1.0);
    assert_eq!(o[0], 5.0);
    assert!(o[1].is_nan());
    let rows = attention_rows_f64(&q, &k, &v, true, 1.0, &[(0, 0, 1), (0, 0, 0)]);
    assert!(rows[0].is_nan());
    assert_eq!(rows[1], 5.0);
}
