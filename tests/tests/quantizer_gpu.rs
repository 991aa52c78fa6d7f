//! The GPU quantizer (`sdpa::quantize`): its codes and scales against the
//! CPU reference (`sdpa::quant::quantize_as_gpu`) bit for bit, its typed
//! errors, and the acceptance table of issue 41 item 5: end-to-end
//! accuracy per distribution, head dim and quantizer option, and the
//! quantizer's time against the attention's at the long record shapes.
//!
//! Ignored without a GPU. On a GPU machine: `cargo xtask bundle` here, then
//! there `gpu-bundle/bin/quantizer_gpu --ignored --nocapture
//! --test-threads=1` (`lab/quantizer.md` says what it should print).

use std::time::Instant;

use half::{bf16, f16};
use kernels_gpu::record::SHAPES;
use sdpa::bench::BenchShape;
use sdpa::quant::{Rotation, ScaleGroup, SplitMix64, quantize_as_gpu};
use sdpa::quantize::{DeviceFloatTensor, InputDtype, Quantizer};
use sdpa::{Attention, AttnError, DeviceFp8Tensor, Options};
use sdpa_tests::open_gpu;

/// Standard normal values, with FlashAttention-3's outliers
/// (`+ N(0, 100)` with probability 0.001) when `outliers`.
fn values(n: usize, outliers: bool, rng: &mut SplitMix64) -> Vec<f32> {
    (0..n)
        .map(|_| {
            let mut x = rng.next_normal_pair().0;
            if outliers && rng.next_f64() < 0.001 {
                x += 10.0 * rng.next_normal_pair().0;
            }
            x as f32
        })
        .collect()
}

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

/// The GPU quantizer's codes and scales for `bytes` of `dtype`.
fn gpu_quantize(
    attn: &Attention,
    quantizer: &Quantizer,
    bytes: &[u8],
    dtype: InputDtype,
    shape: [usize; 4],
    rotation: Rotation,
    group: ScaleGroup,
) -> Result<(Vec<u8>, Vec<f32>), AttnError> {
    let stream = attn.stream();
    let input = DeviceFloatTensor { data: stream.clone_htod(bytes)?, dtype, shape };
    let groups = if group == ScaleGroup::PerHead { shape[1] } else { shape[0] * shape[1] };
    let mut codes = stream.alloc_zeros::<u8>(shape.iter().product())?;
    let mut scales = stream.alloc_zeros::<f32>(groups)?;
    let mut amax = stream.alloc_zeros::<u32>(groups)?;
    quantizer.quantize_into(&input, rotation, group, &mut codes, &mut scales, &mut amax)?;
    Ok((stream.clone_dtoh(&codes)?, stream.clone_dtoh(&scales)?))
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
        let raw = values(n, true, &mut SplitMix64::new(dim as u64));
        for dtype in [InputDtype::F16, InputDtype::Bf16, InputDtype::F32] {
            let (bytes, widened) = stored(&raw, dtype);
            for rotation in [Rotation::None, Rotation::Hadamard] {
                for group in [ScaleGroup::PerHead, ScaleGroup::PerBatchHead] {
                    let at = format!("{dtype:?} D={dim} {rotation:?} {group:?}");
                    let (codes, scales) =
                        gpu_quantize(&attn, &quantizer, &bytes, dtype, shape, rotation, group).expect("quantizes");
                    let (want_codes, want_scales) =
                        quantize_as_gpu("x", &widened, shape, rotation, group).expect("reference quantizes");
                    let want_bits: Vec<u32> = want_scales.iter().map(|s| s.to_bits()).collect();
                    assert_eq!(scales.iter().map(|s| s.to_bits()).collect::<Vec<_>>(), want_bits, "{at}: scales");
                    let differ = codes.iter().zip(&want_codes).filter(|(a, b)| a != b).count();
                    let first = codes.iter().zip(&want_codes).position(|(a, b)| a != b);
                    assert_eq!(differ, 0, "{at}: {differ} codes differ, the first at element {first:?}");
                    checked += 1;
                }
            }
        }
    }
    println!("{checked} configurations: codes and scales identical to the CPU reference");
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
    let dev = |bytes: &[u8], rotation| -> DeviceFp8Tensor {
        let data = attn.stream().clone_htod(bytes).expect("uploads");
        quantizer.quantize(&DeviceFloatTensor { data, dtype: InputDtype::F16, shape }, rotation).expect("quantizes")
    };
    let (q, k, v) = (dev(x[0], rotation), dev(x[1], rotation), dev(x[2], Rotation::None));
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
                let raw = [(); 3].map(|_| values(n, outliers, &mut rng));
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

#[test]
#[ignore = "needs an NVIDIA GPU with compute capability 8.9+; run on a GPU machine (README: GPU tests)"]
fn quantizer_time_against_attention() {
    let attn = open_gpu();
    let quantizer = Quantizer::new(&attn).expect("the quantizer loads");
    println!(
        "f16 q, k, v quantized per head (Hadamard on q and k): the three tensors' time against the default kernel's"
    );
    println!("(wall clock over 20 back-to-back calls, each call's launches included)");
    println!("| shape | quantizer us | GB/s | attention us | ratio |");
    println!("|---|---|---|---|---|");
    for text in &SHAPES[2..] {
        let s = BenchShape::parse(text).expect("a record shape");
        let shape = [s.batch, s.heads, s.seq, s.head_dim];
        let n: usize = shape.iter().product();
        let stream = attn.stream();
        let raw = values(n, true, &mut SplitMix64::new(1));
        let (bytes, _) = stored(&raw, InputDtype::F16);
        let input =
            DeviceFloatTensor { data: stream.clone_htod(&bytes).expect("uploads"), dtype: InputDtype::F16, shape };
        let mut codes = [(); 3].map(|_| stream.alloc_zeros::<u8>(n).expect("allocates"));
        let mut scales = stream.alloc_zeros::<f32>(s.heads).expect("allocates");
        let mut amax = stream.alloc_zeros::<u32>(s.heads).expect("allocates");
        let quantize_seconds = time(&attn, 20, || {
            for (codes, rotation) in codes.iter_mut().zip([Rotation::Hadamard, Rotation::Hadamard, Rotation::None]) {
                quantizer
                    .quantize_into(&input, rotation, ScaleGroup::PerHead, codes, &mut scales, &mut amax)
                    .expect("quantizes");
            }
        });
        let unit = vec![1.0f32; s.heads];
        let [q, k, v] = codes.map(|data| DeviceFp8Tensor { data, shape, scales: unit.clone() });
        let opts = Options::new().causal(s.causal);
        let plan = attn.plan(&q, &k, &v, &opts).expect("plans");
        let problem = attn.prepare(&plan, q, k, v).expect("prepares");
        let mut out = attn.alloc_output(&problem).expect("allocates");
        let attention_seconds = time(&attn, 20, || attn.run(&problem, &mut out).expect("runs"));
        let bytes_moved = 3.0 * n as f64 * (2.0 + 1.0);
        let ratio = quantize_seconds / attention_seconds;
        println!(
            "| {text} | {:.1} | {:.0} | {:.1} | {:.1}% |",
            quantize_seconds * 1e6,
            bytes_moved / quantize_seconds / 1e9,
            attention_seconds * 1e6,
            100.0 * ratio
        );
        // Far beyond the 10% target would mean a broken kernel, not a slow one.
        assert!(ratio < 0.5, "{text}: the quantizer takes {:.0}% of the attention time", 100.0 * ratio);
    }
}
