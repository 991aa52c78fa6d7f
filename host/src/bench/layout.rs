//! Dense shapes timed with `[B, S, H, D]` tensors (`sdpa bench --layout
//! bshd`, [`Layout::Bshd`]) through the device API
//! ([`Attention::run_views`]): the same values as the `[B, H, S, D]` rows,
//! laid out as FlashAttention's `flash_attn_func` takes them, checked on
//! sampled rows against the f64 reference before they are timed.

use super::{BenchConfig, BenchInputs, BenchRow, LaunchMode, check_dense_rows, dense_row, time_calls, time_on_stream};
use crate::attention::Attention;
use crate::device::{DeviceScales, Fp8View, OutputViewMut, ScaleLayout, Workspace};
use crate::error::AttnError;
use crate::options::{Layout, Options};
use crate::plan::Plan;
use cudarc::driver::CudaSlice;
use kernels_gpu::variant::Variant;

/// One `[B, S, H, D]` call's buffers on the device.
struct BshdRun<'a> {
    attn: &'a Attention,
    plan: Plan,
    /// Q, K and V codes in `[B, S, H, D]` order.
    codes: [CudaSlice<u8>; 3],
    /// Q's and K's (= V's) shapes in memory order.
    memory: [[usize; 4]; 2],
    scales: [CudaSlice<f32>; 3],
    ws: Workspace,
    o: CudaSlice<u16>,
}

impl<'a> BshdRun<'a> {
    /// Plans `variant` for `inputs` laid out `[B, S, H, D]` and uploads them
    /// so.
    fn new(attn: &'a Attention, variant: Variant, inputs: &BenchInputs, opts: &Options) -> Result<Self, AttnError> {
        let stream = attn.stream();
        let BenchInputs { shape, q, k, v } = inputs;
        let opts = Options { variant: variant.into(), layout: Layout::Bshd, ..*opts };
        let plan = attn.plan_shapes(shape.q_dims(), shape.kv_dims(), shape.kv_dims(), &opts)?;
        let [qc, kc, vc] = [q, k, v].map(|t| stream.clone_htod(&Layout::Bshd.arrange(&t.data, t.shape)));
        let [qs, ks, vs] = [q, k, v].map(|t| stream.clone_htod(&t.scales));
        Ok(BshdRun {
            attn,
            codes: [qc?, kc?, vc?],
            memory: [Layout::Bshd.memory_order(shape.q_dims()), Layout::Bshd.memory_order(shape.kv_dims())],
            scales: [qs?, ks?, vs?],
            ws: attn.workspace(&plan)?,
            o: stream.alloc_zeros(plan.problem().q_len())?,
            plan,
        })
    }

    /// Launches the call (asynchronously).
    fn call(&mut self) -> Result<(), AttnError> {
        let [q_memory, kv_memory] = self.memory;
        let [q, k, v] = &self.codes;
        let [qs, ks, vs] = &self.scales;
        let scales = DeviceScales::new(qs.as_view(), ks.as_view(), vs.as_view(), ScaleLayout::PerHead);
        let output = self.plan.problem().output;
        self.attn.run_views(
            &self.plan,
            &Fp8View::bshd(q.as_view(), q_memory)?,
            &Fp8View::bshd(k.as_view(), kv_memory)?,
            &Fp8View::bshd(v.as_view(), kv_memory)?,
            &scales,
            &mut OutputViewMut::bshd(self.o.as_view_mut(), output, q_memory)?,
            &mut self.ws,
        )
    }
}

/// Checks then times `variant` on `inputs` laid out `[B, S, H, D]`, as
/// [`super::bench_shape`] does `[B, H, S, D]`: the output poisoned before
/// the checked run, sampled rows against the f64 reference (with the
/// window and cap of `cfg`), then each launch mode (not `graph-overlap`,
/// which the device API has not: the caller refuses it first).
pub fn bench_shape_bshd(
    attn: &Attention,
    variant: Variant,
    inputs: &BenchInputs,
    cfg: &BenchConfig,
    modes: &[LaunchMode],
) -> Result<Vec<BenchRow>, AttnError> {
    let shape = inputs.shape;
    let mut run = BshdRun::new(attn, variant, inputs, &cfg.options(shape.causal))?;
    super::poison_output(attn, &mut run.o)?;
    run.call()?;
    let o = super::read_output(attn, &run.o, run.plan.problem().output)?;
    let softmax_scale = run.plan.problem().softmax_scale as f64;
    let (stats, gate) = check_dense_rows(inputs, cfg, variant, softmax_scale, Layout::Bshd, |i| o[i]);

    let launches = cfg.launches_for(time_on_stream(attn.stream(), || run.call())?);
    let cfg = cfg.with_launches(launches);
    let mut result = Vec::new();
    for &mode in modes {
        let counts = (cfg.warmup_launches.max(1), cfg.launches_per_sample);
        let t = time_calls(attn.stream(), cfg.samples, counts, mode, || run.call())?;
        result.push(dense_row(variant, &run.plan, shape, Layout::Bshd, (mode, launches), &t, (&stats, gate)));
    }
    Ok(result)
}
