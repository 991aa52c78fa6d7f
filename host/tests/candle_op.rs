//! `sdpa::candle::attention` against candle's own attention (matmul,
//! softmax) on the same E4M3 tensors, dequantized to f32 in candle: scales
//! per head and per (batch, key/value head), causal masking, grouped-query
//! heads, an explicit softmax scale and both output types, within the
//! correctness gate; and bad inputs refused with the library's messages.
//!
//! Ignored without a GPU (the binary links candle's CUDA libraries). Built
//! with the `candle` feature (docs/candle.md); on a GPU machine:
//! `candle_op --ignored --nocapture --test-threads=1`.

use candle_core::{D, DType, Device, Tensor};
use kernels_gpu::window::KeyWindow;
use sdpa::candle::{Fp8Scales, attention};
use sdpa::metrics::{GATE, compare};
use sdpa::quant::random_problem;
use sdpa::{Fp8Tensor, Layout, Options, OutputDtype, Variant};

/// Q, K and V of one case, on the device, with their scales.
struct Case {
    q: Tensor,
    k: Tensor,
    v: Tensor,
    /// The op's scales: per head or per (batch, key/value head).
    scales: Fp8Scales,
    /// The same scales for the reference, expanded to `[batch, heads, 1, 1]`
    /// of Q's heads and of K's and V's.
    expanded: [Tensor; 3],
}

fn cuda() -> Device {
    Device::new_cuda(0).expect("a CUDA device for the GPU tests")
}

/// An E4M3 candle tensor of `t`'s codes.
fn fp8_tensor(t: &Fp8Tensor, dev: &Device) -> Tensor {
    let codes: Vec<float8::F8E4M3> = t.data.iter().map(|&c| float8::F8E4M3::from_bits(c)).collect();
    Tensor::from_vec(codes, t.shape.to_vec(), dev).expect("upload")
}

/// `[batch, heads]` scales as a `[batch, heads, 1, 1]` tensor.
fn expand(values: Vec<f32>, batch: usize, heads: usize, dev: &Device) -> Tensor {
    Tensor::from_vec(values, (batch, heads, 1, 1), dev).expect("upload scales")
}

/// A random problem whose scales are one per head or, with `per_batch`,
/// one per (batch, key/value head): the per-head ones divided by
/// `1 + b / 2` in batch `b` (smaller outputs, so the absolute bound of the
/// gate stays as strict), Q's shared by the query heads of a group.
fn case(q_shape: [usize; 4], kv_shape: [usize; 4], per_batch: bool, seed: u64) -> Case {
    let dev = cuda();
    let (q, k, v) = random_problem(q_shape, kv_shape, seed);
    let [batch, heads_q, _, _] = q_shape;
    let heads_kv = kv_shape[1];
    let group = heads_q / heads_kv;
    let factor = |b: usize| 1.0 / (1.0 + 0.5 * b as f32);
    // Scale of (batch b, head h) for the op's tensors and the reference's.
    let kv_scale = |t: &Fp8Tensor, b: usize, h: usize| if per_batch { t.scales[h] * factor(b) } else { t.scales[h] };
    let q_scale = |b: usize, h: usize| if per_batch { q.scales[h / group * group] * factor(b) } else { q.scales[h] };
    let grid = |heads: usize, f: &dyn Fn(usize, usize) -> f32| -> Vec<f32> {
        (0..batch).flat_map(|b| (0..heads).map(move |h| (b, h))).map(|(b, h)| f(b, h)).collect()
    };
    let scales = if per_batch {
        let per_kv_head = |f: &dyn Fn(usize, usize) -> f32| {
            Tensor::from_vec(grid(heads_kv, f), (batch, heads_kv), &dev).expect("upload scales")
        };
        Fp8Scales {
            q: per_kv_head(&|b, h| q_scale(b, h * group)),
            k: per_kv_head(&|b, h| kv_scale(&k, b, h)),
            v: per_kv_head(&|b, h| kv_scale(&v, b, h)),
        }
    } else {
        let per_head = |t: &Fp8Tensor| Tensor::new(t.scales.as_slice(), &dev).expect("upload scales");
        Fp8Scales { q: per_head(&q), k: per_head(&k), v: per_head(&v) }
    };
    let expanded = [
        expand(grid(heads_q, &q_scale), batch, heads_q, &dev),
        expand(grid(heads_kv, &|b, h| kv_scale(&k, b, h)), batch, heads_kv, &dev),
        expand(grid(heads_kv, &|b, h| kv_scale(&v, b, h)), batch, heads_kv, &dev),
    ];
    Case { q: fp8_tensor(&q, &dev), k: fp8_tensor(&k, &dev), v: fp8_tensor(&v, &dev), scales, expanded }
}

/// An E4M3 tensor's values as f32 on its device, converted on the CPU:
/// candle 0.11's CUDA backend asks for cast kernels named `cast_f8e4m3_*`,
/// which its kernels name `cast_f8_e4m3_*`, so the cast fails on the GPU.
fn to_f32(t: &Tensor) -> candle_core::Result<Tensor> {
    t.to_device(&Device::Cpu)?.to_dtype(DType::F32)?.to_device(t.device())
}

/// Each key/value head repeated for the `group` query heads that read it.
fn repeat_heads(t: &Tensor, group: usize) -> candle_core::Result<Tensor> {
    let (b, h, s, d) = t.dims4()?;
    t.unsqueeze(2)?.expand((b, h, group, s, d))?.reshape((b, h * group, s, d))
}

/// Candle's attention in f32 on the dequantized inputs: the reference.
fn reference(c: &Case, opts: &Options) -> candle_core::Result<Tensor> {
    let [q_scale, k_scale, v_scale] = &c.expanded;
    let (_, heads_q, seq_q, head_dim) = c.q.dims4()?;
    let (_, heads_kv, seq_kv, _) = c.k.dims4()?;
    let group = heads_q / heads_kv;
    let q = to_f32(&c.q)?.broadcast_mul(q_scale)?;
    let k = repeat_heads(&to_f32(&c.k)?.broadcast_mul(k_scale)?, group)?;
    let v = repeat_heads(&to_f32(&c.v)?.broadcast_mul(v_scale)?, group)?;
    let softmax_scale = opts.scale.unwrap_or(1.0 / (head_dim as f32).sqrt());
    let mut scores = (q.matmul(&k.t()?.contiguous()?)? * f64::from(softmax_scale))?;
    if let Some(cap) = opts.softcap {
        scores = ((scores / f64::from(cap))?.tanh()? * f64::from(cap))?;
    }
    // Query i sits at key position p = i + seq_kv - seq_q (the last query
    // sees the last key); causal, it sees no key past p; under a window,
    // keys p - left ..= p + right.
    let window = opts.window;
    let sees = |i: usize, j: usize| {
        let (p, j) = ((i + seq_kv) as i64 - seq_q as i64, j as i64);
        (!opts.causal || j <= p)
            && (window.left == KeyWindow::UNBOUNDED || j >= p - i64::from(window.left))
            && (window.right == KeyWindow::UNBOUNDED || j <= p + i64::from(window.right))
    };
    let mask: Vec<f32> =
        (0..seq_q).flat_map(|i| (0..seq_kv).map(move |j| if sees(i, j) { 0.0 } else { f32::NEG_INFINITY })).collect();
    scores = scores.broadcast_add(&Tensor::from_vec(mask, (seq_q, seq_kv), q.device())?)?;
    let max = scores.max_keepdim(D::Minus1)?;
    let exp = scores.broadcast_sub(&max)?.exp()?;
    let probs = exp.broadcast_div(&exp.sum_keepdim(D::Minus1)?)?;
    probs.matmul(&v)
}

/// Runs the op and the reference and checks the op within the gate.
fn check(name: &str, c: &Case, opts: &Options) {
    let out = attention(&c.q, &c.k, &c.v, &c.scales, opts).expect("attention");
    let want_dtype = match opts.output {
        OutputDtype::F16 => DType::F16,
        OutputDtype::Bf16 => DType::BF16,
    };
    assert_eq!(out.dtype(), want_dtype, "{name}: output type");
    assert_eq!(out.dims(), c.q.dims(), "{name}: output shape");
    assert!(out.device().same_device(c.q.device()), "{name}: output device");
    let got: Vec<f32> = out.to_dtype(DType::F32).and_then(|t| t.flatten_all()?.to_vec1()).expect("read output");
    let want: Vec<f64> = reference(c, opts)
        .and_then(|t| t.flatten_all()?.to_vec1::<f32>())
        .expect("reference")
        .into_iter()
        .map(f64::from)
        .collect();
    let stats = compare(&got, &want, GATE.max_abs);
    println!("{name}: {stats}");
    assert!(GATE.passes(&stats), "{name}: {stats} is outside the gate {GATE:?}");
}

#[test]
#[ignore = "needs an NVIDIA GPU (sm_89+) and the CUDA 13 libraries candle links"]
fn matches_candle_attention() {
    let causal = Options::new().causal(true);
    let bf16 = Options::new().output(OutputDtype::Bf16);
    let cases = [
        ("per head", [2, 8, 256, 64], [2, 8, 256, 64], false, Options::default()),
        ("causal, odd length, bf16", [1, 4, 1000, 128], [1, 4, 1000, 128], false, causal.output(OutputDtype::Bf16)),
        ("GQA 4:1, per (batch, kv head)", [2, 8, 300, 128], [2, 2, 300, 128], true, bf16),
        ("GQA 4:1 causal, per (batch, kv head)", [2, 8, 384, 64], [2, 2, 384, 64], true, causal),
        ("decode: one query, causal", [1, 8, 1, 128], [1, 2, 777, 128], false, causal),
        ("softmax scale 0.05", [1, 2, 128, 128], [1, 2, 512, 128], false, bf16.scale(0.05)),
    ];
    for (i, (name, q_shape, kv_shape, per_batch, opts)) in cases.into_iter().enumerate() {
        check(name, &case(q_shape, kv_shape, per_batch, 40 + i as u64), &opts);
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU (sm_89+) and the CUDA 13 libraries candle links"]
fn runs_again_with_the_cached_plan_and_gives_the_same_bits() {
    let c = case([1, 4, 200, 64], [1, 4, 200, 64], false, 9);
    let opts = Options::new().causal(true);
    let bits = |t: Tensor| t.to_dtype(DType::F32).and_then(|t| t.flatten_all()?.to_vec1::<f32>()).expect("read");
    let first = bits(attention(&c.q, &c.k, &c.v, &c.scales, &opts).expect("first call"));
    let second = bits(attention(&c.q, &c.k, &c.v, &c.scales, &opts).expect("second call"));
    assert_eq!(first, second);
}

/// A candle tensor's values as f32, in its own order.
fn values(t: &Tensor) -> Vec<f32> {
    t.to_dtype(DType::F32).and_then(|t| t.flatten_all()?.to_vec1::<f32>()).expect("read")
}

/// `[batch, seq, heads, head_dim]` tensors (FlashAttention's order, the
/// transposes of the cases' tensors) give the bits of the `[batch, heads,
/// seq, head_dim]` run, O in their order: prefill on `wgmma`, and a decode
/// of one query row.
#[test]
#[ignore = "needs an NVIDIA GPU (sm_90a for wgmma) and the CUDA 13 libraries candle links"]
fn bshd_tensors_give_the_bits_of_bhsd_tensors() {
    let runs = [
        ("wgmma GQA 4:1 causal", [2, 8, 300, 128], [2, 2, 300, 128], Variant::Wgmma, true),
        ("wgmma-fp8pv D = 64", [1, 4, 129, 64], [1, 4, 200, 64], Variant::WgmmaFp8Pv, false),
        ("decode one query row", [2, 8, 1, 128], [2, 2, 777, 128], Variant::Decode, true),
    ];
    for (i, (name, q_shape, kv_shape, variant, causal)) in runs.into_iter().enumerate() {
        let c = case(q_shape, kv_shape, false, 60 + i as u64);
        let opts = Options::new().variant(variant).causal(causal);
        let bhsd = attention(&c.q, &c.k, &c.v, &c.scales, &opts).expect("bhsd");
        // (Transposed on the CPU: candle 0.11 has no CUDA copy kernel for
        // F8E4M3, so `contiguous()` of a transposed E4M3 tensor fails there.)
        let t = |x: &Tensor| {
            let cpu = x.to_device(&Device::Cpu).and_then(|x| x.transpose(1, 2)?.contiguous());
            cpu.and_then(|x| x.to_device(c.q.device())).expect("transpose")
        };
        let out = attention(&t(&c.q), &t(&c.k), &t(&c.v), &c.scales, &opts.layout(Layout::Bshd)).expect("bshd");
        let [b, h, s, d] = q_shape;
        assert_eq!(out.dims(), [b, s, h, d], "{name}: O in [batch, seq, heads, head_dim]");
        assert_eq!(values(&t(&out)), values(&bhsd), "{name}: bshd bits against bhsd");
        // The same tensors as `narrow`ed slices of fused ones, read in
        // place: K and V the halves of one KV tensor's heads, Q half of a
        // doubled Q's (`decode` takes Q contiguous).
        let fused = |a: &Tensor, b: &Tensor| {
            let cpu = |x: &Tensor| x.to_device(&Device::Cpu).and_then(|x| x.transpose(1, 2)?.contiguous());
            let both = Tensor::cat(&[cpu(a).expect("a"), cpu(b).expect("b")], 2).expect("cat");
            both.to_device(c.q.device()).expect("fused")
        };
        let kv = fused(&c.k, &c.v);
        let hkv = kv_shape[1];
        let (k, v) = (kv.narrow(2, 0, hkv).expect("k"), kv.narrow(2, hkv, hkv).expect("v"));
        let q = if variant == Variant::Decode { t(&c.q) } else { fused(&c.q, &c.q).narrow(2, 0, h).expect("q") };
        assert!(!k.is_contiguous() && !v.is_contiguous());
        let strided = attention(&q, &k, &v, &c.scales, &opts.layout(Layout::Bshd)).expect("strided bshd");
        assert_eq!(values(&strided), values(&out), "{name}: strided slices against contiguous tensors");
        println!("{name}: bshd gives the bhsd bits, and so do slices of fused tensors");
    }
}

/// A softcap and a sliding window on the same shapes as a plain call
/// before them: each is planned with its own options (the op caches plans)
/// and matches candle's attention with the same cap and window.
#[test]
#[ignore = "needs an NVIDIA GPU (sm_90a for the score twins) and the CUDA 13 libraries candle links"]
fn softcaps_and_windows_are_planned_apart_and_match_candle_attention() {
    let c = case([1, 4, 256, 128], [1, 4, 256, 128], false, 70);
    let plain = Options::new().scale(0.5);
    for (name, opts) in [
        ("plain", plain),
        ("softcap 5", plain.softcap(5.0)),
        ("window (64, 0)", plain.window(Some(64), Some(0))),
        ("causal, window (100, -), softcap 20", plain.causal(true).window(Some(100), None).softcap(20.0)),
    ] {
        check(name, &c, &opts);
    }
}

/// The message of the error `attention` gives, which must be one.
fn error_of(q: &Tensor, k: &Tensor, v: &Tensor, scales: &Fp8Scales) -> String {
    match attention(q, k, v, scales, &Options::default()) {
        Ok(_) => panic!("expected an error"),
        Err(e) => e.to_string(),
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU (sm_89+) and the CUDA 13 libraries candle links"]
fn bad_inputs_are_candle_errors_with_the_library_message() {
    let c = case([1, 4, 64, 64], [1, 4, 64, 64], false, 3);
    let s = &c.scales;
    let transposed = c.q.transpose(2, 3).expect("transpose");
    assert!(error_of(&transposed, &c.k, &c.v, s).contains("contiguous"));
    let f16 = to_f32(&c.q).and_then(|t| t.to_dtype(DType::F16)).expect("cast");
    assert!(error_of(&f16, &c.k, &c.v, s).contains("F8E4M3"));
    let odd_dim = case([1, 4, 64, 72], [1, 4, 64, 72], false, 4);
    assert!(error_of(&odd_dim.q, &odd_dim.k, &odd_dim.v, &odd_dim.scales).contains("head dimension 72"));
    let three_heads = case([1, 3, 64, 64], [1, 2, 64, 64], false, 5);
    let msg = error_of(&three_heads.q, &three_heads.k, &three_heads.v, &three_heads.scales);
    assert!(msg.contains("multiple of key/value heads"), "{msg}");
    let cpu_scales = Fp8Scales { q: s.q.to_device(&Device::Cpu).expect("to cpu"), ..s.clone() };
    assert!(error_of(&c.q, &c.k, &c.v, &cpu_scales).contains("CUDA device"));
    let mixed = Fp8Scales { q: s.q.unsqueeze(0).expect("unsqueeze"), ..s.clone() };
    assert!(error_of(&c.q, &c.k, &c.v, &mixed).contains("ranks"));
    let cpu = |t: &Tensor| t.to_device(&Device::Cpu).expect("to cpu");
    assert!(error_of(&cpu(&c.q), &cpu(&c.k), &cpu(&c.v), s).contains("CUDA devices only"));
}
