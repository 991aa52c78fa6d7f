//! Runs through the device API on views of host tensors, with the
//! log-sum-exp: the GPU tests of layouts and windows.

use sdpa::cudarc::driver::CudaStream;
use sdpa::device::{DeviceScales, Fp8View, OutputViewMut, RunExtras, ScaleLayout};
use sdpa::{Attention, AttnError, Fp8Tensor, Layout, Options};
use std::sync::Arc;

/// What one run gave, in `[B, Hq, Sq, D]` order whatever the layout: O's
/// bits, and the log-sum-exp as the layout lays it out.
pub struct RunOutput {
    /// O's bits, `[B, Hq, Sq, D]`.
    pub o_bits: Vec<u16>,
    /// The log-sum-exp, in the output's row order.
    pub lse: Vec<f32>,
}

/// Runs `q`, `k`, `v` (`[B, H, S, D]` tensors) through device views laid
/// out as `opts.layout`, with per-head scales, on an output and a
/// log-sum-exp poisoned with NaN.
pub fn run_with_lse(
    stream: &Arc<CudaStream>,
    attn: &Attention,
    (q, k, v): (&Fp8Tensor, &Fp8Tensor, &Fp8Tensor),
    opts: &Options,
) -> Result<RunOutput, AttnError> {
    let layout = opts.layout;
    let memory = |t: &Fp8Tensor| layout.arrange(&t.data, t.shape);
    let [qd, kd, vd] = [q, k, v].map(|t| stream.clone_htod(&memory(t)).expect("codes"));
    let plan = attn.plan_shapes(q.shape, k.shape, v.shape, opts)?;
    let mut ws = attn.workspace(&plan)?;
    let [qs, ks, vs] = [&q.scales, &k.scales, &v.scales].map(|s| stream.clone_htod(s).expect("scales"));
    let n = q.data.len();
    let mut o = stream.clone_htod(&vec![0x7FFFu16; n]).expect("o");
    let mut lse = stream.clone_htod(&vec![f32::NAN; n / q.shape[3]]).expect("lse");
    let view = |codes, t: &Fp8Tensor| match layout {
        Layout::Bshd => Fp8View::bshd(codes, layout.memory_order(t.shape)),
        _ => Fp8View::new(codes, t.shape),
    };
    let mut out = match layout {
        Layout::Bshd => OutputViewMut::bshd(o.as_view_mut(), opts.output, layout.memory_order(q.shape))?,
        _ => OutputViewMut::new(o.as_view_mut(), opts.output, q.shape)?,
    };
    attn.run_views_with(
        &plan,
        &view(qd.as_view(), q)?,
        &view(kd.as_view(), k)?,
        &view(vd.as_view(), v)?,
        &DeviceScales::new(qs.as_view(), ks.as_view(), vs.as_view(), ScaleLayout::PerHead),
        &mut out,
        &mut ws,
        RunExtras::new().lse(lse.as_view_mut()),
    )?;
    let bits = stream.clone_dtoh(&o).expect("o back");
    let lse = stream.clone_dtoh(&lse).expect("lse back");
    stream.synchronize().expect("sync");
    let o_bits = layout.to_bhsd(&bits, q.shape);
    Ok(RunOutput { o_bits, lse })
}
