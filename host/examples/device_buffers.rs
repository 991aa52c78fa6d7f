//! The calls a framework makes: its own stream, its buffers already on the
//! GPU (E4M3 codes, f32 scales per (batch, KV head) as FlashAttention-3
//! takes them, a bf16 output), one plan and one workspace made once, then
//! a call per step that allocates and copies nothing.
//! `cargo run --release -p sdpa --example device_buffers` (needs a GPU).

use sdpa::cudarc::driver::CudaContext;
use sdpa::device::{DeviceScales, Fp8View, OutputViewMut, ScaleLayout};
use sdpa::quant::random_problem;
use sdpa::{Attention, ImageChoice, Options, OutputDtype};

fn main() -> Result<(), sdpa::AttnError> {
    let (q_shape, kv_shape) = ([2, 8, 1024, 128], [2, 2, 1024, 128]); // [B, H, S, D], GQA 4:1
    let ctx = CudaContext::new(0)?;
    let stream = ctx.new_stream()?; // stands for the framework's current stream

    // The framework's tensors, here filled from random E4M3 codes.
    let (q, k, v) = random_problem(q_shape, kv_shape, 1);
    let (dq, dk, dv) = (stream.clone_htod(&q.data)?, stream.clone_htod(&k.data)?, stream.clone_htod(&v.data)?);
    let descale = |base: f32| stream.clone_htod(&[base, base * 2.0, base * 0.5, base * 1.5]); // [B, Hkv]
    let (q_descale, k_descale, v_descale) = (descale(0.02)?, descale(0.03)?, descale(0.01)?);
    let mut o = stream.alloc_zeros::<u16>(q_shape.iter().product())?; // bf16 bits

    // Once: the kernels on the framework's stream, a plan from the shapes,
    // and the scratch the plan needs.
    let attn = Attention::on_stream(stream.clone(), ImageChoice::Auto)?;
    let opts = Options::new().causal(true).output(OutputDtype::Bf16);
    let plan = attn.plan_shapes(q_shape, kv_shape, kv_shape, &opts)?;
    let mut workspace = attn.workspace(&plan)?;
    println!("{} on {}, workspace {} bytes", plan.kernel().entry, attn.device().name, workspace.size().bytes());

    // Every step: borrowed views in and out, queued on the stream.
    for _ in 0..3 {
        let scales =
            DeviceScales::new(q_descale.as_view(), k_descale.as_view(), v_descale.as_view(), ScaleLayout::PerBatchHead);
        attn.run_views(
            &plan,
            &Fp8View::new(dq.as_view(), q_shape)?,
            &Fp8View::new(dk.as_view(), kv_shape)?,
            &Fp8View::new(dv.as_view(), kv_shape)?,
            &scales,
            &mut OutputViewMut::new(o.as_view_mut(), OutputDtype::Bf16, q_shape)?,
            &mut workspace,
        )?;
    }
    let bits = stream.clone_dtoh(&o)?;
    stream.synchronize()?;
    println!("o[0] = {}", sdpa::tensor::to_f32(OutputDtype::Bf16, bits[0]));
    Ok(())
}
