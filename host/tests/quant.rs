//! Per-head quantization, the saturating encoder, and the random inputs.

use kernels_gpu::fp8::e4m3_to_f32;
use sdpa::AttnError;
use sdpa::quant::{
    SplitMix64, encode_e4m3, from_codes, quantize_per_head, quantize_per_head_named, random_normal, random_problem,
};

#[test]
fn scale_is_amax_over_448_per_head_across_batches() {
    // [B=2, H=3, S=2, D=2]; head 1's largest magnitude sits in batch 1.
    let shape = [2, 3, 2, 2];
    let mut values = vec![0.25f32; 24];
    let at = |b: usize, h: usize, s: usize, d: usize| ((b * 3 + h) * 2 + s) * 2 + d;
    values[at(0, 0, 1, 0)] = -3.5; // head 0 amax 3.5 (negative)
    values[at(1, 1, 0, 1)] = 10.0; // head 1 amax 10, in batch 1
    values[at(0, 2, 0, 0)] = 0.5; // head 2 amax 0.5
    let t = quantize_per_head(&values, shape).unwrap();
    assert_eq!(t.shape, shape);
    assert_eq!(t.scales, vec![3.5 / 448.0, 10.0 / 448.0, 0.5 / 448.0]);
    // The amax element lands on +-448.
    assert_eq!(t.data[at(0, 0, 1, 0)], 0xFE);
    assert_eq!(t.data[at(1, 1, 0, 1)], 0x7E);
    assert_eq!(t.data[at(0, 2, 0, 0)], 0x7E);
    // Other elements: the nearest code of value / scale.
    for b in 0..2 {
        for h in 0..3 {
            let x = values[at(b, h, 0, 0)] as f64 / t.scales[h] as f64;
            assert_eq!(t.data[at(b, h, 0, 0)], encode_e4m3(x));
        }
    }
}

#[test]
fn dequantized_values_are_within_half_an_ulp() {
    let shape = [2, 4, 33, 16];
    let values = random_normal(shape, 7);
    let t = quantize_per_head(&values, shape).unwrap();
    let [b_, h_, s_, d_] = shape;
    for b in 0..b_ {
        for h in 0..h_ {
            let scale = t.scales[h] as f64;
            for s in 0..s_ {
                for d in 0..d_ {
                    let x = values[((b * h_ + h) * s_ + s) * d_ + d] as f64;
                    let q = t.value(b, h, s, d);
                    // 3 mantissa bits: half an ulp is 2^-4 relative, and
                    // 2^-10 * scale in the subnormal range.
                    let bound = (x.abs() * 2f64.powi(-4)).max(scale * 2f64.powi(-10));
                    assert!((q - x).abs() <= bound * (1.0 + 1e-9), "x={x} q={q}");
                }
            }
        }
    }
}

#[test]
fn encoder_saturates_to_448_and_never_gives_nan() {
    for (x, code) in [
        (448.0, 0x7E),
        (455.9, 0x7E),
        (456.0, 0x7E), // tie between 448 and (NaN) 480: stays 448
        (460.0, 0x7E),
        (464.0, 0x7E),
        (470.0, 0x7E),
        (1e9, 0x7E),
        (f64::MAX, 0x7E),
        (-448.0, 0xFE),
        (-1e9, 0xFE),
        (-500.0, 0xFE),
    ] {
        assert_eq!(encode_e4m3(x), code, "{x}");
    }
    assert_eq!(encode_e4m3(f64::NAN) & 0x7F, 0x7F);
}

#[test]
fn encoder_rounds_to_nearest_ties_to_even() {
    assert_eq!(encode_e4m3(1.0625), 0x38); // tie 1.0 | 1.125 -> even 1.0
    assert_eq!(encode_e4m3(1.0626), 0x39);
    assert_eq!(encode_e4m3(1.1875), 0x3A); // tie 1.125 | 1.25 -> even 1.25
    assert_eq!(encode_e4m3(-1.0625), 0xB8);
    assert_eq!(encode_e4m3(2f64.powi(-10)), 0x00); // tie 0 | 2^-9 -> 0
    assert_eq!(encode_e4m3(2f64.powi(-10) * 1.01), 0x01);
    assert_eq!(encode_e4m3(3.0 * 2f64.powi(-10)), 0x02); // tie 2^-9 | 2^-8 -> even
}

#[test]
fn quantizer_saturates_values_at_the_edge() {
    // Values that round up past 448 after dividing by the scale still
    // give 448, never the NaN code.
    let values = [448.0f32, 447.9, -448.0, 300.0];
    let t = quantize_per_head(&values, [1, 1, 1, 4]).unwrap();
    assert_eq!(t.scales, vec![1.0]);
    assert_eq!(t.data, vec![0x7E, 0x7E, 0xFE, encode_e4m3(300.0)]);
    assert!(t.data.iter().all(|c| c & 0x7F != 0x7F));
}

#[test]
fn all_zero_head_gets_scale_one() {
    // Head 0 all zeros (one of them -0), head 1 not.
    let shape = [1, 2, 2, 2];
    let values = [0.0, -0.0, 0.0, 0.0, 1.0, -2.0, 0.5, 0.0];
    let t = quantize_per_head(&values, shape).unwrap();
    assert_eq!(t.scales, vec![1.0, 2.0 / 448.0]);
    assert_eq!(&t.data[..4], &[0x00, 0x80, 0x00, 0x00]);
    assert_eq!(t.data[5], 0xFE);
    assert!((0..4).all(|i| t.value(0, 0, i / 2, i % 2) == 0.0));
}

#[test]
fn length_mismatch_is_buffer_length() {
    let err = quantize_per_head_named("k", &[1.0; 7], [1, 2, 2, 2]).unwrap_err();
    match err {
        AttnError::BufferLength { tensor, expected, actual } => {
            assert_eq!((tensor.as_str(), expected, actual), ("k", 8, 7));
        }
        other => panic!("expected BufferLength, got {other:?}"),
    }
}

#[test]
fn shape_overflow_is_too_large() {
    let err = quantize_per_head(&[], [usize::MAX, 2, 1, 1]).unwrap_err();
    assert!(matches!(err, AttnError::TooLarge(_)), "{err:?}");
}

#[test]
fn non_finite_values_are_rejected_naming_the_element() {
    for bad in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
        let mut values = vec![1.0f32; 16];
        // [b=1, h=0, s=1, d=1] of shape [2, 2, 2, 2]
        values[((2) * 2 + 1) * 2 + 1] = bad;
        let err = quantize_per_head_named("v", &values, [2, 2, 2, 2]).unwrap_err();
        let msg = err.to_string();
        assert!(matches!(err, AttnError::InvalidScale { .. }), "{err:?}");
        assert!(msg.contains("v scale of head 0"), "{msg}");
        assert!(msg.contains("[1, 0, 1, 1]"), "{msg}");
    }
}

#[test]
fn tiny_amax_whose_scale_underflows_is_rejected() {
    let tiny = f32::from_bits(1); // smallest subnormal: /448 underflows to 0
    let err = quantize_per_head(&[tiny, 0.0], [1, 1, 1, 2]).unwrap_err();
    assert!(matches!(err, AttnError::InvalidScale { .. }), "{err:?}");
}

#[test]
fn from_codes_keeps_what_it_is_given() {
    let t = from_codes(vec![0x38, 0xB8], [1, 1, 1, 2], vec![0.5]);
    assert_eq!(t.data, vec![0x38, 0xB8]);
    assert_eq!(t.value(0, 0, 0, 0), 0.5);
    assert_eq!(t.value(0, 0, 0, 1), -0.5);
}

#[test]
fn splitmix64_matches_the_published_sequence() {
    // Reference values of SplitMix64 seeded with 0 (as in Vigna's splitmix64.c).
    let mut rng = SplitMix64::new(0);
    assert_eq!(rng.next_u64(), 0xE220_A839_7B1D_CDAF);
    assert_eq!(rng.next_u64(), 0x6E78_9E6A_A1B9_65F4);
    assert_eq!(rng.next_u64(), 0x06C4_5D18_8009_454F);
}

#[test]
fn random_normal_is_deterministic_and_standard() {
    let shape = [1, 2, 300, 167]; // odd count: the last Box-Muller pair is split
    let a = random_normal(shape, 42);
    assert_eq!(a.len(), 2 * 300 * 167);
    assert_eq!(a, random_normal(shape, 42));
    assert_ne!(a, random_normal(shape, 43));
    assert!(a.iter().all(|x| x.is_finite()));
    let n = a.len() as f64;
    let mean = a.iter().map(|&x| x as f64).sum::<f64>() / n;
    let var = a.iter().map(|&x| (x as f64 - mean).powi(2)).sum::<f64>() / n;
    assert!(mean.abs() < 0.02, "mean {mean}");
    assert!((var - 1.0).abs() < 0.03, "variance {var}");
    let within_1 = a.iter().filter(|x| x.abs() < 1.0).count() as f64 / n;
    assert!((within_1 - 0.6827).abs() < 0.01, "P(|x|<1) = {within_1}");
}

#[test]
fn random_problem_is_deterministic_with_distinct_streams() {
    let (q, k, v) = random_problem([2, 4, 16, 64], [2, 4, 16, 64], 3);
    assert_eq!(q.shape, [2, 4, 16, 64]);
    assert_ne!(q.data, k.data);
    assert_ne!(k.data, v.data);
    assert_ne!(q.data, v.data);
    let (q2, k2, v2) = random_problem([2, 4, 16, 64], [2, 4, 16, 64], 3);
    assert_eq!((&q, &k, &v), (&q2, &k2, &v2));
    let (q3, _, _) = random_problem([2, 4, 16, 64], [2, 4, 16, 64], 4);
    assert_ne!(q2.data, q3.data);
}

#[test]
fn random_problem_is_quantized_per_head_by_amax() {
    let (q, k, v) = random_problem([1, 4, 64, 64], [1, 2, 100, 64], 9);
    assert_eq!(k.shape, [1, 2, 100, 64]);
    for t in [&q, &k, &v] {
        assert_eq!(t.scales.len(), t.shape[1]);
        let per_head = t.shape[2] * t.shape[3];
        for h in 0..t.shape[1] {
            let codes = &t.data[h * per_head..(h + 1) * per_head];
            // amax maps to 448 exactly, so some code is +-448 in each head.
            assert!(codes.iter().any(|&c| c & 0x7F == 0x7E), "head {h}");
            assert!(codes.iter().all(|&c| !e4m3_to_f32(c).is_nan()));
            // Standard normal amax over a few thousand values is ~3.5.
            let amax = t.scales[h] * 448.0;
            assert!((2.5..5.5).contains(&amax), "amax {amax}");
        }
    }
}

/// The three tensors, drawn on their own threads, are the same for the same
/// seed, distinct from one another and from another seed's, and K and V do
/// not depend on Q's shape.
#[test]
fn random_problem_is_deterministic_and_its_tensors_distinct() {
    let (q_shape, kv_shape) = ([2, 4, 33, 64], [2, 2, 70, 64]);
    let (q, k, v) = random_problem(q_shape, kv_shape, 7);
    assert_eq!((q.clone(), k.clone(), v.clone()), random_problem(q_shape, kv_shape, 7));
    assert_ne!(k.data, v.data);
    assert_ne!(q, random_problem(q_shape, kv_shape, 8).0);
    let (q1, k1, v1) = random_problem(kv_shape, kv_shape, 7);
    assert_eq!((k1, v1), (k, v), "K and V do not depend on Q's shape");
    assert_eq!(q1.shape, kv_shape);
}
