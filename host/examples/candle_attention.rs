//! FP8 attention on candle tensors: quantizes f32 Q, K and V to E4M3 in
//! candle (one scale per batch and key/value head, as
//! FlashAttention-3 takes them), runs `sdpa::candle::attention` with
//! grouped-query heads and causal masking, and compares it with candle's
//! f32 attention on the unquantized inputs.
//!
//! Build with the `candle` feature (docs/candle.md), then on a GPU machine:
//! `candle_attention` (prints the shapes, the output type and the error).

use candle_core::{D, DType, Device, Tensor};
use sdpa::candle::{Fp8Scales, attention};
use sdpa::{Options, OutputDtype};

/// `x / scales` as E4M3 on `x`'s device. The rounding runs on the CPU:
/// candle 0.11's CUDA backend asks for cast kernels named `cast_*_f8e4m3`,
/// which its kernels name `cast_*_f8_e4m3`, so the cast fails on the GPU.
fn to_e4m3(x: &Tensor, scales: &Tensor) -> candle_core::Result<Tensor> {
    x.broadcast_div(scales)?.to_device(&Device::Cpu)?.to_dtype(DType::F8E4M3)?.to_device(x.device())
}

/// The largest finite E4M3 value.
const E4M3_MAX: f64 = 448.0;

/// `x` `[batch, heads, seq, head_dim]` as E4M3 codes, with one scale per
/// (batch, head) such that each head's largest magnitude maps to 448.
fn quantize(x: &Tensor) -> candle_core::Result<(Tensor, Tensor)> {
    let (batch, heads, _, _) = x.dims4()?;
    let amax = x.abs()?.flatten_from(2)?.max(D::Minus1)?; // [batch, heads]
    let scales = (amax / E4M3_MAX)?.clamp(f32::MIN_POSITIVE, f32::MAX)?;
    let codes = to_e4m3(x, &scales.reshape((batch, heads, 1, 1))?)?;
    Ok((codes, scales))
}

/// Q's scales per (batch, key/value head): the largest over each group of
/// query heads, so that every query head of the group fits.
fn quantize_q(q: &Tensor, heads_kv: usize) -> candle_core::Result<(Tensor, Tensor)> {
    let (batch, heads_q, seq, dim) = q.dims4()?;
    let group = heads_q / heads_kv;
    let amax = q.abs()?.reshape((batch, heads_kv, group * seq * dim))?.max(D::Minus1)?;
    let scales = (amax / E4M3_MAX)?.clamp(f32::MIN_POSITIVE, f32::MAX)?;
    let per_query_head = scales.unsqueeze(2)?.repeat((1, 1, group))?.reshape((batch, heads_q, 1, 1))?;
    Ok((to_e4m3(q, &per_query_head)?, scales))
}

/// Candle's causal attention in f32, key/value heads repeated for their
/// groups of query heads.
fn candle_attention(q: &Tensor, k: &Tensor, v: &Tensor) -> candle_core::Result<Tensor> {
    let (batch, heads_q, seq_q, dim) = q.dims4()?;
    let (_, heads_kv, seq_kv, _) = k.dims4()?;
    let group = heads_q / heads_kv;
    let repeat = |t: &Tensor| {
        t.unsqueeze(2)?.expand((batch, heads_kv, group, seq_kv, dim))?.reshape((batch, heads_q, seq_kv, dim))
    };
    let (k, v) = (repeat(k)?, repeat(v)?);
    let scores = (q.matmul(&k.t()?.contiguous()?)? / (dim as f64).sqrt())?;
    let mask: Vec<f32> = (0..seq_q)
        .flat_map(|i| (0..seq_kv).map(move |j| if j + seq_q > i + seq_kv { f32::NEG_INFINITY } else { 0.0 }))
        .collect();
    let scores = scores.broadcast_add(&Tensor::from_vec(mask, (seq_q, seq_kv), q.device())?)?;
    let exp = scores.broadcast_sub(&scores.max_keepdim(D::Minus1)?)?.exp()?;
    exp.broadcast_div(&exp.sum_keepdim(D::Minus1)?)?.matmul(&v)
}

fn main() -> candle_core::Result<()> {
    let dev = Device::new_cuda(0)?;
    let (batch, heads_q, heads_kv, seq, dim) = (2, 16, 4, 1024, 128);
    let q = Tensor::randn(0f32, 1.0, (batch, heads_q, seq, dim), &dev)?;
    let k = Tensor::randn(0f32, 1.0, (batch, heads_kv, seq, dim), &dev)?;
    let v = Tensor::randn(0f32, 1.0, (batch, heads_kv, seq, dim), &dev)?;

    let (q8, q_scale) = quantize_q(&q, heads_kv)?;
    let (k8, k_scale) = quantize(&k)?;
    let (v8, v_scale) = quantize(&v)?;
    let scales = Fp8Scales { q: q_scale, k: k_scale, v: v_scale };
    let opts = Options::new().causal(true).output(OutputDtype::Bf16);
    let out = attention(&q8, &k8, &v8, &scales, &opts)?;

    let want = candle_attention(&q, &k, &v)?;
    let err = (out.to_dtype(DType::F32)? - &want)?.abs()?.flatten_all()?.max(0)?.to_scalar::<f32>()?;
    println!("q {:?}, k and v {:?}: out {:?} {:?}", q.dims(), k.dims(), out.dims(), out.dtype());
    println!("largest difference from candle's f32 attention on the unquantized inputs: {err:.4}");
    Ok(())
}
