//! The CPU reference of the GPU quantizer (`sdpa::quant::quantize_as_gpu`):
//! the Hadamard rotation, the scale groups, the codes and the errors.

use kernels_gpu::fp8::e4m3_to_f32;
use sdpa::AttnError;
use sdpa::quant::{Rotation, ScaleGroup, SplitMix64, encode_e4m3, hadamard_norm, hadamard_row, quantize_as_gpu};

/// Sylvester's Hadamard entry `H[i][j] = (-1)^popcount(i & j)`.
fn sylvester(i: usize, j: usize) -> f64 {
    if (i & j).count_ones() % 2 == 0 { 1.0 } else { -1.0 }
}

fn random_row(dim: usize, seed: u64) -> Vec<f32> {
    let mut rng = SplitMix64::new(seed);
    (0..dim).map(|_| rng.next_normal_pair().0 as f32).collect()
}

#[test]
fn hadamard_row_is_the_normalised_sylvester_matrix() {
    for dim in [64, 128] {
        let x = random_row(dim, dim as u64);
        let mut y = x.clone();
        hadamard_row(&mut y);
        for (i, &yi) in y.iter().enumerate() {
            let want: f64 = (0..dim).map(|j| sylvester(i, j) * x[j] as f64).sum::<f64>() / (dim as f64).sqrt();
            assert!((yi as f64 - want).abs() < 1e-5, "D={dim} element {i}: {yi} vs {want}");
        }
    }
}

#[test]
fn hadamard_row_is_its_own_inverse_and_keeps_dot_products() {
    for dim in [64, 128] {
        let (a, b) = (random_row(dim, 1), random_row(dim, 2));
        let (mut ra, mut rb) = (a.clone(), b.clone());
        hadamard_row(&mut ra);
        hadamard_row(&mut rb);
        let dot = |x: &[f32], y: &[f32]| x.iter().zip(y).map(|(&p, &q)| p as f64 * q as f64).sum::<f64>();
        assert!((dot(&ra, &rb) - dot(&a, &b)).abs() < 1e-4, "D={dim}: the rotation changed a·b");
        let mut back = ra.clone();
        hadamard_row(&mut back);
        for (x, y) in back.iter().zip(&a) {
            assert!((x - y).abs() < 1e-5, "D={dim}: H·H·x != x");
        }
    }
}

#[test]
fn the_kernels_normalisation_is_the_references() {
    for dim in [64u32, 128] {
        assert_eq!(kernels_gpu::quantize::hadamard_norm(dim), hadamard_norm(dim as usize), "D={dim}");
    }
}

#[test]
fn hadamard_spreads_an_outlier_over_the_row() {
    let mut row = vec![0.0f32; 64];
    row[5] = 80.0;
    hadamard_row(&mut row);
    assert!(row.iter().all(|&x| x.abs() == 10.0), "{row:?}");
}

#[test]
fn scales_follow_the_group() {
    // [B=2, H=2, S=1, D=64]; the largest magnitude of (b, h) is 4b + 2h + 1.
    let shape = [2, 2, 1, 64];
    let mut values = vec![0.5f32; 256];
    for b in 0..2 {
        for h in 0..2 {
            values[(b * 2 + h) * 64 + 7] = -((4 * b + 2 * h + 1) as f32);
        }
    }
    let (codes, per_head) = quantize_as_gpu("x", &values, shape, Rotation::None, ScaleGroup::PerHead).unwrap();
    assert_eq!(per_head, vec![5.0 / 448.0, 7.0 / 448.0]);
    let (_, per_batch_head) = quantize_as_gpu("x", &values, shape, Rotation::None, ScaleGroup::PerBatchHead).unwrap();
    assert_eq!(per_batch_head, vec![1.0 / 448.0, 3.0 / 448.0, 5.0 / 448.0, 7.0 / 448.0]);
    // The group's largest magnitude lands on -448 (code 0xFE); others are
    // the nearest code to the f32 product with the f32 reciprocal.
    assert_eq!(codes[(2 + 1) * 64 + 7], 0xFE);
    assert_eq!(codes[0], encode_e4m3((0.5f32 * (1.0 / per_head[0])) as f64));
}

#[test]
fn rotated_codes_dequantize_to_the_rotated_values() {
    let shape = [1, 1, 3, 128];
    let values = random_row(3 * 128, 9);
    let (codes, scales) = quantize_as_gpu("x", &values, shape, Rotation::Hadamard, ScaleGroup::PerHead).unwrap();
    let mut rotated = values.clone();
    rotated.as_chunks_mut::<128>().0.iter_mut().for_each(|row| hadamard_row(row));
    let amax = rotated.iter().fold(0.0f32, |m, x| m.max(x.abs()));
    assert_eq!(scales, vec![amax / 448.0]);
    for (c, x) in codes.iter().zip(&rotated) {
        let back = e4m3_to_f32(*c) * scales[0];
        // E4M3 keeps 3 fraction bits: half an ulp is 1/16 of the value, or
        // the subnormal step 2^-9 times the scale.
        assert!((back - x).abs() <= x.abs() / 16.0 + scales[0] / 512.0, "{x} came back as {back}");
    }
}

#[test]
fn an_all_zero_group_has_scale_one() {
    let (codes, scales) =
        quantize_as_gpu("x", &[0.0; 128], [1, 2, 1, 64], Rotation::Hadamard, ScaleGroup::PerHead).unwrap();
    assert_eq!(scales, vec![1.0, 1.0]);
    assert!(codes.iter().all(|&c| c == 0));
}

#[test]
fn bad_inputs_are_typed_errors() {
    let err = quantize_as_gpu("q", &[0.0; 10], [1, 1, 1, 64], Rotation::None, ScaleGroup::PerHead).unwrap_err();
    assert!(matches!(err, AttnError::BufferLength { expected: 64, actual: 10, .. }), "{err}");
    let mut values = vec![1.0f32; 64];
    values[3] = f32::INFINITY;
    let err = quantize_as_gpu("q", &values, [1, 1, 1, 64], Rotation::None, ScaleGroup::PerHead).unwrap_err();
    assert!(matches!(err, AttnError::InvalidScale { .. }), "{err}");
    let err = quantize_as_gpu("q", &[1e-45; 64], [1, 1, 1, 64], Rotation::None, ScaleGroup::PerHead).unwrap_err();
    assert!(matches!(err, AttnError::InvalidScale { value: 0.0, .. }), "{err}");
}

/// The GPU quantizer's schedule (`kernels_gpu::quantize::schedule`): every
/// tile gets one amax and one encode ticket, and every encode ticket comes
/// after all amax tickets of its unit (so a warp only waits for warps that
/// took their tickets before it: the wait always ends).
#[test]
fn the_schedule_covers_every_tile_once_and_orders_each_encode_after_its_units_amax() {
    use kernels_gpu::quantize::{Work, lag_units, schedule};
    for (units, tiles_per_unit, unit_bytes) in
        [(1, 1, 1), (1, 7, 1 << 30), (3, 5, 1 << 20), (48, 64, 1 << 18), (96, 256, 4 << 20), (5, 3, 64 << 20)]
    {
        let tiles = units * tiles_per_unit;
        let lag = lag_units(units, unit_bytes) * tiles_per_unit;
        assert!((tiles_per_unit..=tiles).contains(&lag), "lag {lag} of {tiles} tiles");
        let mut amax_ticket = vec![None; tiles as usize];
        let mut encode_ticket = vec![None; tiles as usize];
        for ticket in 0..2 * tiles {
            let slot = match schedule(ticket, tiles, lag) {
                Work::Amax(t) => &mut amax_ticket[t as usize],
                Work::Encode(t) => &mut encode_ticket[t as usize],
            };
            assert_eq!(*slot, None, "ticket {ticket}: a tile given twice");
            *slot = Some(ticket);
        }
        for (tile, encode) in encode_ticket.iter().enumerate() {
            let encode = encode.expect("every tile encoded");
            let unit = tile as u32 / tiles_per_unit;
            let last_amax = (unit * tiles_per_unit..(unit + 1) * tiles_per_unit)
                .map(|t| amax_ticket[t as usize].expect("every tile's amax"))
                .max()
                .expect("a unit has tiles");
            assert!(last_amax < encode, "tile {tile}: encode ticket {encode} before its unit's amax {last_amax}");
        }
    }
}

/// The GPU kernel's lane layout of the rotation (`kernels_gpu::quantize`:
/// `D / 32` lanes per row, 32 values each, chunk `j` of lane `l` holding
/// row elements `(j * lanes + l) * chunk ..`; spans below the chunk within
/// it, spans from `chunk * lanes` across a lane's chunks, the spans between
/// across lanes), replayed here: bit for bit [`hadamard_row`].
#[test]
fn the_kernels_lane_layout_of_the_rotation_is_hadamard_row_bit_for_bit() {
    use kernels_gpu::quantize::LANE_VALUES;
    let values = LANE_VALUES as usize;
    let butterflies = |x: &mut [f32], span: usize| {
        for i in (0..x.len()).filter(|i| i & span == 0) {
            let (a, b) = (x[i], x[i + span]);
            x[i] = a + b;
            x[i + span] = a - b;
        }
    };
    for dim in [64, 128] {
        for chunk in [8, 4] {
            let lanes = dim / values;
            let mut row = random_row(dim, (dim * chunk) as u64);
            row[3] += 90.0;
            let element = |l: usize, v: usize| (v / chunk * lanes + l) * chunk + v % chunk;
            let mut lane: Vec<Vec<f32>> =
                (0..lanes).map(|l| (0..values).map(|v| row[element(l, v)]).collect()).collect();
            let mut span = 1;
            while span < dim {
                if span < chunk {
                    lane.iter_mut().for_each(|x| butterflies(x, span));
                } else if span < chunk * lanes {
                    let mask = span / chunk;
                    let before = lane.clone();
                    for (l, x) in lane.iter_mut().enumerate() {
                        for (v, x) in x.iter_mut().enumerate() {
                            let other = before[l ^ mask][v];
                            *x = if l & mask != 0 { other - *x } else { *x + other };
                        }
                    }
                } else {
                    lane.iter_mut().for_each(|x| butterflies(x, span / lanes));
                }
                span *= 2;
            }
            let norm = hadamard_norm(dim);
            hadamard_row(&mut row);
            for (l, x) in lane.iter().enumerate() {
                for (v, &x) in x.iter().enumerate() {
                    let want = row[element(l, v)];
                    assert_eq!((x * norm).to_bits(), want.to_bits(), "D={dim} chunk {chunk} lane {l} value {v}");
                }
            }
        }
    }
}
