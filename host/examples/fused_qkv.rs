//! Attention straight out of a fused QKV projection: one `[B, S, 3, H, D]`
//! E4M3 buffer whose Q, K and V slices the kernels read in place
//! (`Fp8View::bshd_strided`, rows `3 * H * D` elements apart), checked
//! against the same tensors copied out dense. Hopper (sm_90a) only: the
//! `[B, S, H, D]` kernels are `wgmma`'s.
//! `cargo run --release -p sdpa --example fused_qkv` (needs a GPU).

use sdpa::cudarc::driver::CudaContext;
use sdpa::device::{DeviceScales, Fp8View, OutputViewMut, RowStrides, ScaleLayout};
use sdpa::quant::random_problem;
use sdpa::{Attention, ImageChoice, Layout, Options, OutputDtype};

fn main() -> Result<(), sdpa::AttnError> {
    let [b, s, h, d] = [2, 1024, 8, 128];
    let shape = [b, h, s, d]; // the plan's order, [B, H, S, D]
    let ctx = CudaContext::new(0)?;
    let stream = ctx.new_stream()?;
    let attn = Attention::on_stream(stream.clone(), ImageChoice::Auto)?;

    // The projection's output: row (b, s) holds Q's heads, then K's, then V's.
    let (q, k, v) = random_problem(shape, shape, 3);
    let dense = [&q, &k, &v].map(|t| Layout::Bshd.arrange(&t.data, t.shape));
    let mut fused = vec![0u8; b * s * 3 * h * d];
    for (row, out) in fused.chunks_exact_mut(3 * h * d).enumerate() {
        for (part, tensor) in dense.iter().enumerate() {
            out[part * h * d..][..h * d].copy_from_slice(&tensor[row * h * d..][..h * d]);
        }
    }
    let qkv = stream.clone_htod(&fused)?;
    let [dq, dk, dv] = dense.map(|codes| stream.clone_htod(&codes));
    let (dq, dk, dv) = (dq?, dk?, dv?);

    let scales_of = |t: &sdpa::Fp8Tensor| stream.clone_htod(&t.scales);
    let (qs, ks, vs) = (scales_of(&q)?, scales_of(&k)?, scales_of(&v)?);
    let scales = DeviceScales::new(qs.as_view(), ks.as_view(), vs.as_view(), ScaleLayout::PerHead);
    let opts = Options::new().causal(true).layout(Layout::Bshd);
    let plan = attn.plan_shapes(shape, shape, shape, &opts)?;
    let mut workspace = attn.workspace(&plan)?;
    let memory = [b, s, h, d];

    // The slices of the fused buffer, read where they lie.
    let strides = RowStrides { row: 3 * h * d, head: d };
    let slice = |part: usize| Fp8View::bshd_strided(qkv.slice(part * h * d..), memory, strides);
    let mut o_fused = stream.alloc_zeros::<u16>(b * s * h * d)?;
    let mut out = OutputViewMut::bshd(o_fused.as_view_mut(), OutputDtype::F16, memory)?;
    attn.run_views(&plan, &slice(0)?, &slice(1)?, &slice(2)?, &scales, &mut out, &mut workspace)?;

    // The same tensors dense.
    let mut o_dense = stream.alloc_zeros::<u16>(b * s * h * d)?;
    let mut out = OutputViewMut::bshd(o_dense.as_view_mut(), OutputDtype::F16, memory)?;
    let (q_view, k_view, v_view) = (
        Fp8View::bshd(dq.as_view(), memory)?,
        Fp8View::bshd(dk.as_view(), memory)?,
        Fp8View::bshd(dv.as_view(), memory)?,
    );
    attn.run_views(&plan, &q_view, &k_view, &v_view, &scales, &mut out, &mut workspace)?;

    let (fused_bits, dense_bits) = (stream.clone_dtoh(&o_fused)?, stream.clone_dtoh(&o_dense)?);
    stream.synchronize()?;
    let differing = fused_bits.iter().zip(&dense_bits).filter(|(a, b)| a != b).count();
    println!(
        "{} on {}: the fused QKV's slices give the dense tensors' output, {differing} bits differ",
        plan.kernel().entry,
        attn.device().name
    );
    Ok(())
}
