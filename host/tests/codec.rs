//! The E4M3 codec of `kernels-gpu` against the `float8` crate, and the host
//! quantizer's round trip on every finite code.

use float8::F8E4M3;
use kernels_gpu::fp8::{E4M3_MAX, e4m3_is_nan, e4m3_to_f32};
use sdpa::quant::{encode_e4m3, quantize_per_head};

/// Every finite E4M3 code, in code order.
fn finite_codes() -> Vec<u8> {
    (0..=255u8).filter(|&c| c & 0x7F != 0x7F).collect()
}

#[test]
fn decode_matches_float8_on_all_256_codes() {
    for code in 0..=255u8 {
        let ours = e4m3_to_f32(code);
        let theirs = F8E4M3::from_bits(code).to_f32();
        if code & 0x7F == 0x7F {
            assert!(ours.is_nan(), "code {code:#04x}: ours {ours} should be NaN");
            assert!(theirs.is_nan(), "code {code:#04x}: float8 {theirs} should be NaN");
            assert!(e4m3_is_nan(code));
        } else {
            assert_eq!(ours.to_bits(), theirs.to_bits(), "code {code:#04x}: ours {ours:e}, float8 {theirs:e}");
            assert!(!e4m3_is_nan(code));
        }
    }
}

#[test]
fn decode_landmarks() {
    assert_eq!(e4m3_to_f32(0x00).to_bits(), 0.0f32.to_bits());
    assert_eq!(e4m3_to_f32(0x80).to_bits(), (-0.0f32).to_bits());
    assert_eq!(e4m3_to_f32(0x38), 1.0);
    assert_eq!(e4m3_to_f32(0x7E), E4M3_MAX);
    assert_eq!(e4m3_to_f32(0xFE), -E4M3_MAX);
    assert_eq!(e4m3_to_f32(0x01), 2f32.powi(-9));
    assert_eq!(e4m3_to_f32(0x08), 2f32.powi(-6));
}

#[test]
fn encode_inverts_decode_on_every_finite_code() {
    for code in finite_codes() {
        let x = e4m3_to_f32(code) as f64;
        assert_eq!(encode_e4m3(x), code, "code {code:#04x} (value {x:e})");
    }
}

#[test]
fn quantize_round_trips_every_finite_code() {
    let codes = finite_codes();
    let values: Vec<f32> = codes.iter().map(|&c| e4m3_to_f32(c)).collect();
    let t = quantize_per_head(&values, [1, 1, 1, values.len()]).unwrap();
    assert_eq!(t.scales, vec![1.0], "amax is 448, so the scale is 1");
    assert_eq!(t.data, codes);
    for (i, &x) in values.iter().enumerate() {
        assert_eq!(t.value(0, 0, 0, i), x as f64);
    }
}

#[test]
fn quantize_round_trips_every_finite_code_at_power_of_two_scale() {
    // Scaling by 2^k is exact, so the codes must come back unchanged.
    for k in [-20, -3, 5, 40] {
        let codes = finite_codes();
        let factor = 2f32.powi(k);
        let values: Vec<f32> = codes.iter().map(|&c| e4m3_to_f32(c) * factor).collect();
        let t = quantize_per_head(&values, [1, 1, values.len(), 1]).unwrap();
        assert_eq!(t.scales, vec![factor], "2^{k}");
        assert_eq!(t.data, codes, "2^{k}");
    }
}
