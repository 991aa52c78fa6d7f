//! `sdpa_fp8._native`: the `sdpa` crate's FP8 attention on PyTorch CUDA
//! tensors, handed over as DLPack capsules (no copies) and run on the
//! caller's CUDA stream. The Python package (`sdpa_fp8`) wraps it in a
//! `torch.library` custom op; see python/README.md.

mod args;
mod dlpack;
mod errors;
mod kvcache_args;
mod packed_args;
mod runner;
mod scores;

use args::Tensors;
use dlpack::read_capsule;
use kvcache_args::KvCacheTensors;
use packed_args::PackedTensors;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyTuple;
use scores::Scores;
use sdpa::{Layout, OutputDtype};

/// Runs attention into `out`: Q, K, V `[B, H, S, D]` E4M3 (DLPack
/// `float8_e4m3fn` or its `uint8` bits), the descales `(B, Hkv)` float32,
/// `out` `[B, Hq, Sq, D]` float16 or bfloat16 and, unless `None`, `lse`
/// `[B, Hq, Sq]` float32 for each row's log-sum-exp (written by the
/// `decode` and `wgmma` variants only: another refuses it), all contiguous
/// on one CUDA device, each as a DLPack capsule
/// (`torch.utils.dlpack.to_dlpack`), which is only read. The work is queued
/// on `stream` (a `CUstream` handle of that device, e.g.
/// `torch.cuda.current_stream().cuda_stream`); the call returns without
/// waiting for it. Keyword-only, as FlashAttention takes them: `window_size
/// = (left, right)`, the keys before and after its position (aligned
/// bottom-right, as causal masking) each query row sees, -1 for no limit
/// on a side, and `softcap`, which replaces each score `s` by `softcap *
/// tanh(s / softcap)`, 0 for none. Both run on the `wgmma` variants
/// (Hopper) and `decode`: with either, the plan takes one of those. The
/// argument checks run before any GPU work.
#[pyfunction]
#[pyo3(signature = (
    q, k, v, q_descale, k_descale, v_descale, out, lse, softmax_scale, causal, stream, *,
    window_size = (-1, -1), softcap = 0.0,
))]
#[allow(clippy::too_many_arguments)]
fn attention(
    q: &Bound<'_, PyAny>,
    k: &Bound<'_, PyAny>,
    v: &Bound<'_, PyAny>,
    q_descale: &Bound<'_, PyAny>,
    k_descale: &Bound<'_, PyAny>,
    v_descale: &Bound<'_, PyAny>,
    out: &Bound<'_, PyAny>,
    lse: Option<&Bound<'_, PyAny>>,
    softmax_scale: f32,
    causal: bool,
    stream: usize,
    window_size: (i64, i64),
    softcap: f64,
) -> PyResult<()> {
    let scores = Scores::new(window_size, softcap).map_err(errors::from_arg)?;
    let tensors = read_tensors([q, k, v, q_descale, k_descale, v_descale, out], lse)?;
    let call = tensors.check(Layout::Bhsd).map_err(errors::from_arg)?;
    // `[B, H, S, D]` tensors are always read: the answer is `true`.
    runner::run(&call, softmax_scale, causal, scores, stream).map_err(errors::from_run)?;
    Ok(())
}

/// Runs attention into `out` on `[B, S, H, D]` tensors in place, as
/// `attention` takes its arguments but Q `[B, Sq, Hq, D]`, K and V `[B,
/// Skv, Hkv, D]`, `out` `[B, Sq, Hq, D]` and `lse` `[B, Sq, Hq]`, each
/// contiguous in that order.
/// Returns `False`, having launched nothing, where the kernel variant the
/// library recommends for the problem cannot read that layout (only the
/// `wgmma` variants, on Hopper, can): the caller then runs `attention` on
/// `[B, H, S, D]` copies.
#[pyfunction]
#[pyo3(signature = (
    q, k, v, q_descale, k_descale, v_descale, out, lse, softmax_scale, causal, stream, *,
    window_size = (-1, -1), softcap = 0.0,
))]
#[allow(clippy::too_many_arguments)]
fn attention_bshd(
    q: &Bound<'_, PyAny>,
    k: &Bound<'_, PyAny>,
    v: &Bound<'_, PyAny>,
    q_descale: &Bound<'_, PyAny>,
    k_descale: &Bound<'_, PyAny>,
    v_descale: &Bound<'_, PyAny>,
    out: &Bound<'_, PyAny>,
    lse: Option<&Bound<'_, PyAny>>,
    softmax_scale: f32,
    causal: bool,
    stream: usize,
    window_size: (i64, i64),
    softcap: f64,
) -> PyResult<bool> {
    let scores = Scores::new(window_size, softcap).map_err(errors::from_arg)?;
    let tensors = read_tensors([q, k, v, q_descale, k_descale, v_descale, out], lse)?;
    let call = tensors.check(Layout::Bshd).map_err(errors::from_arg)?;
    runner::run(&call, softmax_scale, causal, scores, stream).map_err(errors::from_run)
}

/// Runs `decode` on a KV cache into `out` (FlashAttention's
/// `flash_attn_with_kvcache`): Q `[B, Hq, Sq, D]` E4M3 (`Sq` at most 16),
/// K and V caches `[B, Skv, Hkv, D]` (rows may be strided as a fused KV
/// projection's; then `Sq` is 1) or, with `page_table` (int32 `[B,
/// max_pages]`), pools `[pages, page_size, Hkv, D]` (`page_size` a power of
/// two from 32 to 65536), `cache_seqlens` (int32 `[B]`, or `None`: every
/// key), the descales `(B, Hkv)` float32, `out` `[B, Hq, Sq, D]` float16 or
/// bfloat16 and, unless `None`, `lse` `[B, Hq, Sq]` float32; each a DLPack
/// capsule as in `attention`, queued on `stream`, with `window_size` and
/// `softcap` as there. Causal masking aligns each sequence's last query
/// with its last key (`cache_seqlens[b]`).
#[pyfunction]
#[pyo3(signature = (
    q, k_cache, v_cache, q_descale, k_descale, v_descale, out, lse, cache_seqlens, page_table,
    softmax_scale, causal, stream, *, window_size = (-1, -1), softcap = 0.0,
))]
#[allow(clippy::too_many_arguments)]
fn attention_kvcache(
    q: &Bound<'_, PyAny>,
    k_cache: &Bound<'_, PyAny>,
    v_cache: &Bound<'_, PyAny>,
    q_descale: &Bound<'_, PyAny>,
    k_descale: &Bound<'_, PyAny>,
    v_descale: &Bound<'_, PyAny>,
    out: &Bound<'_, PyAny>,
    lse: Option<&Bound<'_, PyAny>>,
    cache_seqlens: Option<&Bound<'_, PyAny>>,
    page_table: Option<&Bound<'_, PyAny>>,
    softmax_scale: f32,
    causal: bool,
    stream: usize,
    window_size: (i64, i64),
    softcap: f64,
) -> PyResult<()> {
    let scores = Scores::new(window_size, softcap).map_err(errors::from_arg)?;
    let tensors = KvCacheTensors {
        q: read_capsule(q, "q")?,
        k: read_capsule(k_cache, "k_cache")?,
        v: read_capsule(v_cache, "v_cache")?,
        cache_seqlens: cache_seqlens.map(|t| read_capsule(t, "cache_seqlens")).transpose()?,
        page_table: page_table.map(|t| read_capsule(t, "page_table")).transpose()?,
        descales: [
            read_capsule(q_descale, "q_descale")?,
            read_capsule(k_descale, "k_descale")?,
            read_capsule(v_descale, "v_descale")?,
        ],
        out: read_capsule(out, "out")?,
        lse: lse.map(|lse| read_capsule(lse, "lse")).transpose()?,
    };
    let call = tensors.check().map_err(errors::from_arg)?;
    runner::run_kvcache(&call, softmax_scale, causal, scores, stream).map_err(errors::from_run)
}

/// The tensors of a dense call from their capsules: Q, K, V, Q's, K's and
/// V's descales and the output, in that order, and the log-sum-exp.
fn read_tensors(
    [q, k, v, q_descale, k_descale, v_descale, out]: [&Bound<'_, PyAny>; 7],
    lse: Option<&Bound<'_, PyAny>>,
) -> PyResult<Tensors> {
    Ok(Tensors {
        q: read_capsule(q, "q")?,
        k: read_capsule(k, "k")?,
        v: read_capsule(v, "v")?,
        descales: [
            read_capsule(q_descale, "q_descale")?,
            read_capsule(k_descale, "k_descale")?,
            read_capsule(v_descale, "v_descale")?,
        ],
        out: read_capsule(out, "out")?,
        lse: lse.map(|lse| read_capsule(lse, "lse")).transpose()?,
    })
}

/// Runs attention on a packed batch of variable-length sequences
/// (FlashAttention's `flash_attn_varlen_func` layout) into `out`: Q
/// `[total_q, Hq, D]`, K and V `[total_k, Hkv, D]` E4M3, the int32 prefix
/// sums `cu_seqlens_q` and `cu_seqlens_k` `[B + 1]`, the descales `(B,
/// Hkv)` float32, `out` `[total_q, Hq, D]` float16 or bfloat16 and, unless
/// `None`, `lse` `[total_q, Hq]` float32 for each row's log-sum-exp; each a
/// DLPack capsule as in `attention`, every sequence at most `max_seqlen_q`
/// queries and `max_seqlen_k` keys. Queued on `stream`, with `window_size`
/// and `softcap` (each sequence's window aligned bottom-right in it), as
/// `attention`.
#[pyfunction]
#[pyo3(signature = (
    q, k, v, cu_seqlens_q, cu_seqlens_k, q_descale, k_descale, v_descale, out, lse,
    max_seqlen_q, max_seqlen_k, softmax_scale, causal, stream, *,
    window_size = (-1, -1), softcap = 0.0,
))]
#[allow(clippy::too_many_arguments)]
fn attention_varlen(
    q: &Bound<'_, PyAny>,
    k: &Bound<'_, PyAny>,
    v: &Bound<'_, PyAny>,
    cu_seqlens_q: &Bound<'_, PyAny>,
    cu_seqlens_k: &Bound<'_, PyAny>,
    q_descale: &Bound<'_, PyAny>,
    k_descale: &Bound<'_, PyAny>,
    v_descale: &Bound<'_, PyAny>,
    out: &Bound<'_, PyAny>,
    lse: Option<&Bound<'_, PyAny>>,
    max_seqlen_q: usize,
    max_seqlen_k: usize,
    softmax_scale: f32,
    causal: bool,
    stream: usize,
    window_size: (i64, i64),
    softcap: f64,
) -> PyResult<()> {
    let scores = Scores::new(window_size, softcap).map_err(errors::from_arg)?;
    let tensors = PackedTensors {
        q: read_capsule(q, "q")?,
        k: read_capsule(k, "k")?,
        v: read_capsule(v, "v")?,
        cu_seqlens_q: read_capsule(cu_seqlens_q, "cu_seqlens_q")?,
        cu_seqlens_k: read_capsule(cu_seqlens_k, "cu_seqlens_k")?,
        descales: [
            read_capsule(q_descale, "q_descale")?,
            read_capsule(k_descale, "k_descale")?,
            read_capsule(v_descale, "v_descale")?,
        ],
        out: read_capsule(out, "out")?,
        lse: lse.map(|lse| read_capsule(lse, "lse")).transpose()?,
    };
    let call = tensors.check().map_err(errors::from_arg)?;
    let max_seqlen = [max_seqlen_q, max_seqlen_k];
    runner::run_packed(&call, max_seqlen, softmax_scale, causal, scores, stream).map_err(errors::from_run)
}

/// The kernel variant the library recommends for Q `[B, Hq, Sq, D]` and
/// K, V `[B, Hkv, Skv, D]` on CUDA device `device` (loading the kernels for
/// `stream` there), with `window_size` and `softcap` as `attention` takes
/// them, by its stable name (`sdpa bench --variants`).
#[pyfunction]
#[pyo3(signature = (q_shape, kv_shape, causal, out_dtype, device, stream, *, window_size = (-1, -1), softcap = 0.0))]
#[allow(clippy::too_many_arguments)]
fn recommended_variant(
    q_shape: [usize; 4],
    kv_shape: [usize; 4],
    causal: bool,
    out_dtype: &str,
    device: usize,
    stream: usize,
    window_size: (i64, i64),
    softcap: f64,
) -> PyResult<&'static str> {
    let output = OutputDtype::from_name(out_dtype)
        .ok_or_else(|| PyValueError::new_err(format!("unknown output type {out_dtype:?} (f16 or bf16)")))?;
    let scores = Scores::new(window_size, softcap).map_err(errors::from_arg)?;
    runner::recommended_variant(device, stream, q_shape, kv_shape, causal, scores, output).map_err(errors::from_run)
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("HEAD_DIMS", PyTuple::new(m.py(), kernels_gpu::kernels::HEAD_DIMS)?)?;
    m.add("RECORD_SHAPES", PyTuple::new(m.py(), kernels_gpu::record::SHAPES)?)?;
    m.add("MAX_SOFTCAP", kernels_gpu::window::MAX_SOFTCAP)?;
    m.add("DECODE_MAX_QUERIES", kernels_gpu::record::DECODE_MAX_QUERIES)?;
    m.add_function(wrap_pyfunction!(attention, m)?)?;
    m.add_function(wrap_pyfunction!(attention_bshd, m)?)?;
    m.add_function(wrap_pyfunction!(attention_varlen, m)?)?;
    m.add_function(wrap_pyfunction!(attention_kvcache, m)?)?;
    m.add_function(wrap_pyfunction!(recommended_variant, m)?)?;
    Ok(())
}
