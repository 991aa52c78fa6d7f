//! The GPU quantizer (`sdpa::quantize`): its codes and scales against the
//! CPU reference (`sdpa::quant::quantize_as_gpu`) bit for bit, its typed
//! errors, and the acceptance table of issue 41 item 5: end-to-end
//! accuracy per distribution, head dim and quantizer option, and the
//! quantizer's time against the attention's at the long record shapes
//! (printed for the record, not judged: speed is gated by benchmarks).
//!
//! Ignored without a GPU. On a GPU machine: `cargo xtask bundle` here, then
//! there `gpu-bundle/bin/quantizer_gpu --ignored --nocapture
//! --test-threads=1` (`lab/quantizer.md` says what it should print).

use std::time::Instant;

use half::{bf16, f16};
use kernels_gpu::record::SHAPES;
use sdpa::bench::BenchShape;
use sdpa::quant::{Rotation, ScaleGroup, SplitMix64, normal_values, quantize_as_gpu};
use sdpa::quantize::{DeviceFloatTensor, InputDtype, QuantizeJob, Quantizer};
use sdpa::{Attention, AttnError, DeviceFp8Tensor, Options};
use sdpa_tests::open_gpu;

/// `values` stored as `dtype` (little-endian bytes) and as the f32 values
/// those bytes hold.
fn stored(values: &[f32], dtype: InputDtype) -> (Vec<u8>, Vec<f32>) {
    match dtype {
        InputDtype::F32 => (values.iter().flat_map(|x| x.to_le_bytes()).collect(), values.to_vec()),
        InputDtype::F16 => {
            let h: Vec<f16> = values.iter().map(|&x| f16::from_f32(x)).collect();
            (h.iter().flat_map(|x| x.to_le_bytes()).collect(), h.iter().map(|x| x.to_f32()).collect())
        }
        InputDtype::Bf16 => {
            let h: Vec<bf16> = values.iter().map(|&x| bf16::from_f32(x)).collect();
            (h.iter().flat_map(|x| x.to_le_bytes()).collect(), h.iter().map(|x| x.to_f32()).collect())
        }
    }
}

/// One tensor's codes and scales, on the host.
type Quantized = (Vec<u8>, Vec<f32>);

/// The GPU quantizer's codes and scales for `bytes` of `dtype` (each of
/// `inputs` one tensor of one launch, with its rotation).
fn gpu_quantize_many(
    attn: &Attention,
    quantizer: &Quantizer,
    inputs: &[(&[u8], Rotation)],
    dtype: InputDtype,
    shape: [usize; 4],
    group: ScaleGroup,
) -> Result<Vec<Quantized>, AttnError> {
    let stream = attn.stream();
    let groups = if group == ScaleGroup::PerHead { shape[1] } else { shape[0] * shape[1] };
    let mut tensors = Vec::new();
    for (bytes, _) in inputs {
        let input = DeviceFloatTensor { data: stream.clone_htod(*bytes)?, dtype, shape };
        let codes = stream.alloc_zeros::<u8>(shape.iter().product())?;
        let scales = stream.alloc_zeros::<f32>(groups)?;
        tensors.push((input, codes, scales));
    }
    let mut jobs: Vec<QuantizeJob<'_>> = tensors
        .iter_mut()
        .zip(inputs)
        .map(|((input, codes, scales), &(_, rotation))| QuantizeJob { input, rotation, codes, scales })
        .collect();
    quantizer.quantize_into(&mut jobs, group)?;
    drop(jobs);
    tensors.iter().map(|(_, codes, scales)| Ok((stream.clone_dtoh(codes)?, stream.clone_dtoh(scales)?))).collect()
}

/// The GPU quantizer's codes and scales for `bytes` of `dtype`, alone in
/// its launch.
fn gpu_quantize(
    attn: &Attention,
    quantizer: &Quantizer,
    bytes: &[u8],
    dtype: InputDtype,
    shape: [usize; 4],
    rotation: Rotation,
    group: ScaleGroup,
) -> Result<Quantized, AttnError> {
    let mut out = gpu_quantize_many(attn, quantizer, &[(bytes, rotation)], dtype, shape, group)?;
    Ok(out.remove(0))
}

/// Asserts that `got` (codes, scales) is `want`'s bits.
fn assert_identical(at: &str, got: &Quantized, want: &Quantized) {
    let bits = |s: &[f32]| s.iter().map(|s| s.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&got.1), bits(&want.1), "{at}: scales");
    let differ = got.0.iter().zip(&want.0).filter(|(a, b)| a != b).count();
    let first = got.0.iter().zip(&want.0).position(|(a, b)| a != b);
    assert_eq!(differ, 0, "{at}: {differ} codes differ, the first at element {first:?}");
}

#[test]
#[ignore = "needs an NVIDIA GPU with compute capability 8.9+; run on a GPU machine (README: GPU tests)"]
fn codes_and_scales_match_the_cpu_reference_bit_for_bit() {
    let attn = open_gpu();
    let quantizer = Quantizer::new(&attn).expect("the quantizer loads");
    let mut checked = 0;
    // S = 200: a full block of 128 rows and a partial one; B = 2, H = 3.
    for dim in [64, 128] {
        let shape = [2, 3, 200, dim];
        let n: usize = shape.iter().product();
        let raw = normal_values(n, true, &mut SplitMix64::new(dim as u64));
        for dtype in [InputDtype::F16, InputDtype::Bf16, InputDtype::F32] {
            let (bytes, widened) = stored(&raw, dtype);
            for rotation in [Rotation::None, Rotation::Hadamard] {
                for group in [ScaleGroup::PerHead, ScaleGroup::PerBatchHead] {
                    let want = quantize_as_gpu("x", &widened, shape, rotation, group).expect("reference quantizes");
                    let at = format!("{dtype:?} D={dim} {rotation:?} {group:?}");
                    let got =
                        gpu_quantize(&attn, &quantizer, &bytes, dtype, shape, rotation, group).expect("quantizes");
                    assert_identical(&at, &got, &want);
                    checked += 1;
                }
            }
        }
    }
    println!("{checked} configurations: codes and scales identical to the CPU reference");
}

#[test]
#[ignore = "needs an NVIDIA GPU with compute capability 8.9+; run on a GPU machine (README: GPU tests)"]
fn three_tensors_in_one_launch_match_the_cpu_reference_bit_for_bit() {
    let attn = open_gpu();
    let quantizer = Quantizer::new(&attn).expect("the quantizer loads");
    let mut checked = 0;
    // Q and K rotated, V not, in one launch; shapes whose units (tensor x
    // group) outnumber the schedule's lag, so encode and amax tiles
    // interleave (the first two: the lag is 8 MiB of input); S not a
    // multiple of the tile's rows (64 at D = 64, 32 at D = 128); each launch
    // twice (the scratch words it leaves must be zero for the next).
    for (shape, dtype) in [
        ([2, 8, 1000, 128], InputDtype::F16),
        ([1, 32, 2000, 64], InputDtype::Bf16),
        ([3, 4, 777, 64], InputDtype::F16),
        ([1, 6, 300, 128], InputDtype::F32),
    ] {
        let n: usize = shape.iter().product();
        let mut rng = SplitMix64::new(n as u64);
        let raw = [(); 3].map(|_| normal_values(n, true, &mut rng));
        let stored = raw.map(|x| stored(&x, dtype));
        let rotations = [Rotation::Hadamard, Rotation::Hadamard, Rotation::None];
        for group in [ScaleGroup::PerHead, ScaleGroup::PerBatchHead] {
            let inputs: Vec<(&[u8], Rotation)> =
                stored.iter().zip(rotations).map(|((bytes, _), r)| (bytes.as_slice(), r)).collect();
            let want: Vec<Quantized> = stored
                .iter()
                .zip(rotations)
                .map(|((_, widened), rotation)| {
                    quantize_as_gpu("x", widened, shape, rotation, group).expect("reference quantizes")
                })
                .collect();
            for call in 0..2 {
                let got = gpu_quantize_many(&attn, &quantizer, &inputs, dtype, shape, group).expect("quantizes");
                for (t, want) in want.iter().enumerate() {
                    assert_identical(&format!("{shape:?} {dtype:?} {group:?} tensor {t} call {call}"), &got[t], want);
                }
                checked += 1;
            }
        }
    }
    println!("{checked} three-tensor launches: codes and scales identical to the CPU reference");
}

#[test]
#[ignore = "needs an NVIDIA GPU with compute capability 8.9+; run on a GPU machine (README: GPU tests)"]
fn bad_inputs_are_typed_errors() {
    let attn = open_gpu();
    let quantizer = Quantizer::new(&attn).expect("the quantizer loads");
    let g = |bytes: &[u8], dtype, shape| {
        gpu_quantize(&attn, &quantizer, bytes, dtype, shape, Rotation::None, ScaleGroup::PerHead)
    };
    let err = g(&[0u8; 2 * 96 * 4], InputDtype::F16, [1, 1, 4, 96]).unwrap_err();
    assert!(matches!(err, AttnError::UnsupportedHeadDim { head_dim: 96, .. }), "{err}");
    let err = g(&[0u8; 64 * 4], InputDtype::F16, [1, 1, 4, 64]).unwrap_err();
    assert!(matches!(err, AttnError::BufferLength { .. }), "{err}");
    let (a, b) = ([0u8; 2 * 64 * 4], [0u8; 2 * 64 * 8]);
    let err = (|| -> Result<(), AttnError> {
        let input = |bytes: &[u8], seq| -> Result<DeviceFloatTensor, AttnError> {
            Ok(DeviceFloatTensor {
                data: attn.stream().clone_htod(bytes)?,
                dtype: InputDtype::F16,
                shape: [1, 1, seq, 64],
            })
        };
        let (x, y) = (input(&a, 4)?, input(&b, 8)?);
        let stream = attn.stream();
        let (mut c0, mut c1) = (stream.alloc_zeros::<u8>(512)?, stream.alloc_zeros::<u8>(512)?);
        let (mut s0, mut s1) = (stream.alloc_zeros::<f32>(1)?, stream.alloc_zeros::<f32>(1)?);
        let mut jobs = [
            QuantizeJob { input: &x, rotation: Rotation::None, codes: &mut c0, scales: &mut s0 },
            QuantizeJob { input: &y, rotation: Rotation::None, codes: &mut c1, scales: &mut s1 },
        ];
        quantizer.quantize_into(&mut jobs, ScaleGroup::PerHead)
    })()
    .unwrap_err();
    assert!(matches!(err, AttnError::ShapeMismatch(_)), "{err}");
    // A NaN makes its head's scale NaN, which `quantize` refuses.
    let mut bytes = vec![0u8; 4 * 64 * 4];
    bytes[4 * 70..4 * 71].copy_from_slice(&f32::NAN.to_le_bytes());
    let input = DeviceFloatTensor {
        data: attn.stream().clone_htod(&bytes).unwrap(),
        dtype: InputDtype::F32,
        shape: [1, 1, 4, 64],
    };
    let err = quantizer.quantize(&input, Rotation::Hadamard).unwrap_err();
    assert!(matches!(err, AttnError::InvalidScale { .. }), "{err}");
}

/// Non-causal attention in f64 on float values `[B, H, S, D]` (all three
/// alike), scale `1/sqrt(D)`, for the query rows `rows` (slice, row): D
/// values each.
fn reference_rows(q: &[f32], k: &[f32], v: &[f32], shape: [usize; 4], rows: &[(usize, usize)]) -> Vec<f64> {
    let [_, _, seq, dim] = shape;
    let scale = 1.0 / (dim as f64).sqrt();
    let mut out = Vec::with_capacity(rows.len() * dim);
    for &(slice, i) in rows {
        let base = slice * seq * dim;
        let qi = &q[base + i * dim..][..dim];
        let s: Vec<f64> = (0..seq)
            .map(|j| {
                scale * qi.iter().zip(&k[base + j * dim..][..dim]).map(|(&a, &b)| a as f64 * b as f64).sum::<f64>()
            })
            .collect();
        let m = s.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let p: Vec<f64> = s.iter().map(|x| (x - m).exp()).collect();
        let l: f64 = p.iter().sum();
        for d in 0..dim {
            out.push((0..seq).map(|j| p[j] * v[base + j * dim + d] as f64).sum::<f64>() / l);
        }
    }
    out
}

/// The quantizer options of the table: (name, rotation of Q and K).
const OPTIONS: [(&str, Rotation); 2] = [("per head", Rotation::None), ("per head + Hadamard(Q,K)", Rotation::Hadamard)];

/// Quantizes f16 `q`, `k`, `v` on the GPU (Q and K rotated as `rotation`),
/// runs the default kernel and returns the output (f32 values).
fn gpu_attention(
    attn: &Attention,
    quantizer: &Quantizer,
    x: [&[u8]; 3],
    shape: [usize; 4],
    rotation: Rotation,
    causal: bool,
) -> Vec<f32> {
    let [q, k, v] = x.map(|bytes| DeviceFloatTensor {
        data: attn.stream().clone_htod(bytes).expect("uploads"),
        dtype: InputDtype::F16,
        shape,
    });
    let quantized =
        quantizer.quantize_many(&[(&q, rotation), (&k, rotation), (&v, Rotation::None)]).expect("quantizes");
    let Ok::<[DeviceFp8Tensor; 3], _>([q, k, v]) = quantized.try_into() else { panic!("three tensors quantized") };
    let opts = Options::new().causal(causal);
    let plan = attn.plan(&q, &k, &v, &opts).expect("plans");
    let problem = attn.prepare(&plan, q, k, v).expect("prepares");
    let mut out = attn.alloc_output(&problem).expect("allocates");
    attn.run(&problem, &mut out).expect("runs");
    attn.download(&out).expect("downloads").values()
}

#[test]
#[ignore = "needs an NVIDIA GPU with compute capability 8.9+; run on a GPU machine (README: GPU tests)"]
fn accuracy_table() {
    let attn = open_gpu();
    let quantizer = Quantizer::new(&attn).expect("the quantizer loads");
    println!(
        "f16 inputs quantized on the GPU, default kernel, non-causal; error of O against float64 attention on the"
    );
    println!("unquantized (f16) inputs over 1024 sampled query rows");
    println!("| shape | distribution | D | quantizer | RMSE | rel L2 |");
    println!("|---|---|---|---|---|---|");
    for [batch, heads, seq] in [[2, 4, 1024], [1, 4, 4096]] {
        for outliers in [false, true] {
            for dim in [64, 128] {
                let shape = [batch, heads, seq, dim];
                let n: usize = shape.iter().product();
                let mut rng = SplitMix64::new(0x5eed ^ dim as u64 ^ ((outliers as u64) << 8) ^ ((seq as u64) << 16));
                let raw = [(); 3].map(|_| normal_values(n, outliers, &mut rng));
                let [(qb, q), (kb, k), (vb, v)] = raw.map(|x| stored(&x, InputDtype::F16));
                let rows: Vec<(usize, usize)> = (0..1024)
                    .map(|_| (rng.below((batch * heads) as u64) as usize, rng.below(seq as u64) as usize))
                    .collect();
                let want = reference_rows(&q, &k, &v, shape, &rows);
                let norm = want.iter().map(|x| x * x).sum::<f64>().sqrt();
                let mut rmse = Vec::new();
                for (name, rotation) in OPTIONS {
                    let o = gpu_attention(&attn, &quantizer, [&qb, &kb, &vb], shape, rotation, false);
                    let got = rows.iter().flat_map(|&(slice, i)| o[(slice * seq + i) * dim..][..dim].to_vec());
                    let err2: f64 = got.zip(&want).map(|(g, w)| (g as f64 - w).powi(2)).sum();
                    let dist = if outliers { "outlier" } else { "normal" };
                    let r = (err2 / want.len() as f64).sqrt();
                    println!(
                        "| {batch},{heads},{seq} | {dist} | {dim} | {name} | {r:.2e} | {:.2e} |",
                        err2.sqrt() / norm
                    );
                    rmse.push(r);
                }
                // The rotation must pay on outliers and cost nothing on normal inputs.
                if outliers {
                    assert!(rmse[1] < 0.75 * rmse[0], "Hadamard RMSE {:.2e} vs per head {:.2e}", rmse[1], rmse[0]);
                } else {
                    assert!(rmse[1] < 1.1 * rmse[0], "Hadamard RMSE {:.2e} vs per head {:.2e}", rmse[1], rmse[0]);
                }
            }
        }
    }
}

/// Mean seconds of `f` over `iterations` calls after one warm-up, the
/// stream synchronised around them.
fn time(attn: &Attention, iterations: u32, mut f: impl FnMut()) -> f64 {
    f();
    attn.stream().synchronize().expect("synchronizes");
    let start = Instant::now();
    for _ in 0..iterations {
        f();
    }
    attn.stream().synchronize().expect("synchronizes");
    start.elapsed().as_secs_f64() / iterations as f64
}

/// The record shapes the time table runs: `SDPA_QUANT_SHAPES` (shapes as
/// `B,H,S,D[,causal]` separated by spaces), else the long record shapes.
fn timed_shapes() -> Vec<String> {
    match std::env::var("SDPA_QUANT_SHAPES") {
        Ok(list) => list.split_whitespace().map(str::to_string).collect(),
        Err(_) => SHAPES[2..].iter().map(|s| s.to_string()).collect(),
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU with compute capability 8.9+; run on a GPU machine (README: GPU tests)"]
fn quantizer_time_against_attention() {
    let attn = open_gpu();
    let quantizer = Quantizer::new(&attn).expect("the quantizer loads");
    println!("f16 q, k, v quantized per head in one launch (three distinct input buffers), with the Hadamard");
    println!("rotation on q and k and with none; wall clock over 20 back-to-back calls after one; TB/s counts 3 bytes");
    println!("per element (f16 read once, E4M3 written once); ratio to the default kernel's time");
    println!("| shape | rotation | quantizer us | TB/s | attention us | ratio |");
    println!("|---|---|---|---|---|---|");
    for text in timed_shapes() {
        let s = BenchShape::parse(&text).expect("a record shape");
        let shape = s.q_dims();
        let n: usize = shape.iter().product();
        let stream = attn.stream();
        let raw = normal_values(n, true, &mut SplitMix64::new(1));
        let (bytes, _) = stored(&raw, InputDtype::F16);
        let inputs = [(); 3].map(|_| DeviceFloatTensor {
            data: stream.clone_htod(&bytes).expect("uploads"),
            dtype: InputDtype::F16,
            shape,
        });
        let mut codes = [(); 3].map(|_| stream.alloc_zeros::<u8>(n).expect("allocates"));
        let mut scales = [(); 3].map(|_| stream.alloc_zeros::<f32>(s.heads_q).expect("allocates"));
        let mut quantize_seconds = Vec::new();
        for (rotation_name, rotation) in [("H(q,k)", Rotation::Hadamard), ("none", Rotation::None)] {
            let seconds = time(&attn, 20, || {
                let rotations = [rotation, rotation, Rotation::None];
                let mut jobs: Vec<QuantizeJob<'_>> = inputs
                    .iter()
                    .zip(codes.iter_mut().zip(scales.iter_mut()))
                    .zip(rotations)
                    .map(|((input, (codes, scales)), rotation)| QuantizeJob { input, rotation, codes, scales })
                    .collect();
                quantizer.quantize_into(&mut jobs, ScaleGroup::PerHead).expect("quantizes");
            });
            quantize_seconds.push((rotation_name, seconds));
        }
        let unit = vec![1.0f32; s.heads_q];
        let [q, k, v] = codes.map(|data| DeviceFp8Tensor { data, shape, scales: unit.clone() });
        let opts = Options::new().causal(s.causal);
        let plan = attn.plan(&q, &k, &v, &opts).expect("plans");
        let problem = attn.prepare(&plan, q, k, v).expect("prepares");
        let mut out = attn.alloc_output(&problem).expect("allocates");
        let attention_seconds = time(&attn, 20, || attn.run(&problem, &mut out).expect("runs"));
        let bytes_moved = 3.0 * n as f64 * (2.0 + 1.0);
        for (rotation_name, seconds) in quantize_seconds {
            println!(
                "| {text} | {rotation_name} | {:.1} | {:.2} | {:.1} | {:.1}% |",
                seconds * 1e6,
                bytes_moved / seconds / 1e12,
                attention_seconds * 1e6,
                100.0 * seconds / attention_seconds
            );
        }
    }
}
