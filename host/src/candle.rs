//! FP8 attention on candle tensors (the `candle` feature).
//!
//! ```no_run
//! # fn main() -> candle_core::Result<()> {
//! use candle_core::{DType, Device, Tensor};
//! let dev = Device::new_cuda(0)?;
//! // [batch, heads, seq, head_dim], E4M3, with one f32 dequantization
//! // scale per head (or per batch and key/value head, shape [batch, heads_kv]).
//! let x = Tensor::randn(0f32, 1.0, (1, 8, 512, 128), &dev)?;
//! let (q, k, v) = (x.to_dtype(DType::F8E4M3)?, x.to_dtype(DType::F8E4M3)?, x.to_dtype(DType::F8E4M3)?);
//! let ones = Tensor::ones(8, DType::F32, &dev)?;
//! let scales = sdpa::candle::Fp8Scales { q: ones.clone(), k: ones.clone(), v: ones };
//! let opts = sdpa::Options::new().causal(true);
//! let o = sdpa::candle::attention(&q, &k, &v, &scales, &opts)?; // f16 [1, 8, 512, 128]
//! # Ok(()) }
//! ```
//!
//! The op runs on candle's own CUDA storage and stream: Q, K, V and the
//! scales are read where candle keeps them (no copies), the output is a new
//! candle tensor on the same device, and the kernels launch on the device's
//! stream, ordered with candle's own work. The kernels are loaded once per
//! candle device, with a reusable workspace, and each problem shape is
//! planned once.

use crate::device::{DeviceScales, Fp8View, OutputViewMut, RowStrides, ScaleLayout, Workspace};
use crate::{Attention, AttnError, ImageChoice, Options, OutputDtype, Plan, VariantChoice};
use candle_core::backend::BackendStorage;
use candle_core::cuda_backend::cudarc::driver::{CudaSlice, CudaView};
use candle_core::cuda_backend::{CudaDevice, CudaStorage, CudaStorageSlice, DeviceId};
use candle_core::{CpuStorage, CustomOp3, Layout, Shape, Storage, Tensor};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// The f32 dequantization scales of Q, K and V, as candle tensors on the
/// device of Q, K and V: either one per head (`q: [heads_q]`,
/// `k` and `v`: `[heads_kv]`) or, as FlashAttention-3 takes its descales,
/// one per batch and key/value head (all three `[batch, heads_kv]`, Q's
/// shared by the query heads of a group).
#[derive(Clone, Debug)]
pub struct Fp8Scales {
    /// Q's scales.
    pub q: Tensor,
    /// K's scales.
    pub k: Tensor,
    /// V's scales.
    pub v: Tensor,
}

/// `O = softmax(scale * Q K^T + mask) V` on candle tensors: Q
/// `[batch, heads_q, seq_q, head_dim]`, K and V `[batch, heads_kv, seq_kv,
/// head_dim]`, all contiguous `DType::F8E4M3` on one CUDA device, and
/// `scales` there too. Returns O `[batch, heads_q, seq_q, head_dim]` in f16
/// or, with `opts.output`, bf16. `opts` also sets causal masking, the
/// softmax scale (default `1/sqrt(head_dim)`), the kernel variant, a
/// sliding window and a softcap.
///
/// With `opts.layout(Layout::Bshd)` the tensors are `[batch, seq, heads,
/// head_dim]` (FlashAttention's order; O too), read in place by the
/// variants that can (`wgmma`, `wgmma-fp8pv`, `decode` with one query
/// row; others answer [`AttnError::LayoutUnavailable`]); Q, K and V may
/// then be strided as [`RowStrides::flattened`] says (e.g. `narrow`ed
/// slices of a fused QKV; `decode` takes Q contiguous). Invalid inputs
/// come back as candle errors whose message is the [`AttnError`]'s.
pub fn attention(
    q: &Tensor,
    k: &Tensor,
    v: &Tensor,
    scales: &Fp8Scales,
    opts: &Options,
) -> candle_core::Result<Tensor> {
    q.apply_op3_no_bwd(k, v, &Fp8Attention { scales: scales.clone(), options: *opts })
}

/// The candle op behind [`attention`]: the scales and options; Q, K and V
/// are its three operands. Inference only (no backward pass).
#[derive(Clone, Debug)]
pub struct Fp8Attention {
    /// Q's, K's and V's dequantization scales.
    pub scales: Fp8Scales,
    /// Masking, softmax scale, variant and output type.
    pub options: Options,
}

impl CustomOp3 for Fp8Attention {
    fn name(&self) -> &'static str {
        "sdpa-fp8-attention"
    }

    fn cpu_fwd(
        &self,
        _: &CpuStorage,
        _: &Layout,
        _: &CpuStorage,
        _: &Layout,
        _: &CpuStorage,
        _: &Layout,
    ) -> candle_core::Result<(CpuStorage, Shape)> {
        Err(candle_core::Error::Msg("sdpa FP8 attention runs on CUDA devices only: Q, K and V are on the CPU".into()))
    }

    fn cuda_fwd(
        &self,
        q: &CudaStorage,
        q_layout: &Layout,
        k: &CudaStorage,
        k_layout: &Layout,
        v: &CudaStorage,
        v_layout: &Layout,
    ) -> candle_core::Result<(CudaStorage, Shape)> {
        let device = &q.device;
        // The tensors' dimensions in memory order, and as the library takes
        // them (`[batch, heads, seq, head_dim]`).
        let layout = self.options.layout;
        let memory = [shape4("q", q_layout, layout)?, shape4("k", k_layout, layout)?, shape4("v", v_layout, layout)?];
        let shapes = memory.map(|dims| layout.memory_order(dims));
        let q_shape = shapes[0];
        let q_view = fp8_view("q", q, q_layout, layout)?;
        let k_view = fp8_view("k", k, k_layout, layout)?;
        let v_view = fp8_view("v", v, v_layout, layout)?;

        let (q_scale, q_scale_layout) = self.scales.q.storage_and_layout();
        let (k_scale, k_scale_layout) = self.scales.k.storage_and_layout();
        let (v_scale, v_scale_layout) = self.scales.v.storage_and_layout();
        let scales = DeviceScales::new(
            scale_slice("q", &q_scale, q_scale_layout, device)?,
            scale_slice("k", &k_scale, k_scale_layout, device)?,
            scale_slice("v", &v_scale, v_scale_layout, device)?,
            scale_layout(&self.scales)?,
        );

        let runner = Runner::of(device)?;
        let mut runner = runner.lock().map_err(|_| poisoned())?;
        let plan = runner.plan(shapes, &self.options)?;
        let Runner { attention, workspace, .. } = &mut *runner;
        let workspace = match workspace {
            Some(ws) => {
                attention.grow_workspace(ws, &plan).map_err(wrap)?;
                ws
            }
            None => workspace.insert(attention.workspace(&plan).map_err(wrap)?),
        };
        let mut run = |mut out: OutputViewMut| {
            attention.run_views(&plan, &q_view, &k_view, &v_view, &scales, &mut out, workspace).map_err(wrap)
        };
        let elements = q_shape.iter().product();
        let slice = match self.options.output {
            OutputDtype::F16 => {
                let mut o = device.alloc_zeros::<half::f16>(elements)?;
                run(OutputViewMut::from_f16(&mut o, q_shape).map_err(wrap)?.laid_out(layout))?;
                CudaStorageSlice::F16(o)
            }
            OutputDtype::Bf16 => {
                let mut o = device.alloc_zeros::<half::bf16>(elements)?;
                run(OutputViewMut::from_bf16(&mut o, q_shape).map_err(wrap)?.laid_out(layout))?;
                CudaStorageSlice::BF16(o)
            }
        };
        let out = CudaStorage { slice, device: device.clone() };
        // O in Q's memory order.
        Ok((out, Shape::from_dims(&memory[0])))
    }
}

/// The kernels loaded on one candle device's stream, the workspace they
/// share (made on the first run, grown for larger plans) and the plans made
/// there, one per problem shape and options.
struct Runner {
    attention: Attention,
    workspace: Option<Workspace>,
    plans: HashMap<PlanKey, Plan>,
}

/// What a plan depends on: the three shapes and every option (the softmax
/// scale and the softcap by their bits, so the key can be hashed).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct PlanKey {
    shapes: [[usize; 4]; 3],
    causal: bool,
    scale: Option<u32>,
    variant: VariantChoice,
    output: OutputDtype,
    layout: crate::Layout,
    window: kernels_gpu::window::KeyWindow,
    softcap: Option<u32>,
}

impl PlanKey {
    /// The key of `shapes` planned with `opts`.
    fn of(shapes: [[usize; 4]; 3], opts: &Options) -> PlanKey {
        let Options { causal, scale, variant, output, layout, window, softcap, .. } = *opts;
        let bits = |x: Option<f32>| x.map(f32::to_bits);
        PlanKey { shapes, causal, scale: bits(scale), variant, output, layout, window, softcap: bits(softcap) }
    }
}

/// One [`Runner`] per candle device, made on its first call.
type Runners = Mutex<HashMap<DeviceId, Arc<Mutex<Runner>>>>;

fn runners() -> &'static Runners {
    static RUNNERS: OnceLock<Runners> = OnceLock::new();
    RUNNERS.get_or_init(Runners::default)
}

impl Runner {
    /// The runner of `device`, loading the kernels on its stream on first
    /// use (the image `SDPA_IMAGE` names, by default the device's own).
    fn of(device: &CudaDevice) -> candle_core::Result<Arc<Mutex<Runner>>> {
        let mut all = runners().lock().map_err(|_| poisoned())?;
        if let Some(runner) = all.get(&device.id()) {
            return Ok(runner.clone());
        }
        let attention = Attention::on_stream(device.cuda_stream(), ImageChoice::from_env()).map_err(wrap)?;
        let runner = Arc::new(Mutex::new(Runner { attention, workspace: None, plans: HashMap::new() }));
        all.insert(device.id(), runner.clone());
        Ok(runner)
    }

    /// The plan of these shapes and options, made on first use.
    fn plan(&mut self, shapes: [[usize; 4]; 3], opts: &Options) -> candle_core::Result<Plan> {
        let key = PlanKey::of(shapes, opts);
        if let Some(plan) = self.plans.get(&key) {
            return Ok(plan.clone());
        }
        let [q, k, v] = shapes;
        let plan = self.attention.plan_shapes(q, k, v, opts).map_err(wrap)?;
        self.plans.insert(key, plan.clone());
        Ok(plan)
    }
}

/// A library error as a candle error with its message.
fn wrap(e: AttnError) -> candle_core::Error {
    candle_core::Error::wrap(e)
}

/// The error for a lock that a panicking call left poisoned.
fn poisoned() -> candle_core::Error {
    candle_core::Error::Msg("sdpa: a previous attention call panicked".into())
}

/// A rank-4 tensor's dimensions, in memory order (`order`'s).
fn shape4(name: &str, layout: &Layout, order: crate::Layout) -> candle_core::Result<[usize; 4]> {
    <[usize; 4]>::try_from(layout.dims()).map_err(|_| {
        let names = match order {
            crate::Layout::Bshd => "[batch, seq, heads, head_dim]",
            _ => "[batch, heads, seq, head_dim]",
        };
        wrap(AttnError::ShapeMismatch(format!("{name} must be {names}, got shape {:?}", layout.dims())))
    })
}

/// A contiguous E4M3 tensor's elements, from its layout's offset, as the
/// library's view of Q, K or V laid out in `order` (no copy); laid out
/// `Bshd`, a tensor whose rows are strided ([`RowStrides::flattened`]) as
/// a strided view.
fn fp8_view<'a>(
    name: &str,
    storage: &'a CudaStorage,
    layout: &Layout,
    order: crate::Layout,
) -> candle_core::Result<Fp8View<'a>> {
    let CudaStorageSlice::F8E4M3(slice) = &storage.slice else {
        return Err(candle_core::Error::Msg(format!("{name} must be F8E4M3, got {:?}", storage.dtype())));
    };
    // `[batch, seq, heads, head_dim]` dimensions read back as `[batch,
    // heads, seq, head_dim]` (`Layout::memory_order` is its own inverse).
    let dims = shape4(name, layout, order)?;
    let strided = RowStrides::flattened(&dims, layout.stride()).filter(|_| order == crate::Layout::Bshd);
    match (layout.contiguous_offsets(), strided) {
        (None, Some(strides)) => {
            let bytes = crate::launch::cast::e4m3_as_bytes(slice.slice(layout.start_offset()..));
            Fp8View::bshd_strided(bytes, dims, strides).map_err(wrap)
        }
        _ => {
            let view = Fp8View::from_e4m3(slice.slice(contiguous(name, layout)?), order.memory_order(dims));
            Ok(view.map_err(wrap)?.laid_out(order))
        }
    }
}

/// The element range of a contiguous layout.
fn contiguous(name: &str, layout: &Layout) -> candle_core::Result<std::ops::Range<usize>> {
    let (start, end) = layout.contiguous_offsets().ok_or_else(|| {
        candle_core::Error::Msg(format!("{name} must be contiguous (call .contiguous() first), got {layout:?}"))
    })?;
    Ok(start..end)
}

/// How the scales are laid out, from their ranks: all per head (rank 1) or
/// all per batch and key/value head (rank 2).
fn scale_layout(scales: &Fp8Scales) -> candle_core::Result<ScaleLayout> {
    match [scales.q.rank(), scales.k.rank(), scales.v.rank()] {
        [1, 1, 1] => Ok(ScaleLayout::PerHead),
        [2, 2, 2] => Ok(ScaleLayout::PerBatchHead),
        ranks => Err(wrap(AttnError::ShapeMismatch(format!(
            "scales must all be per head (rank 1) or all per batch and key/value head (rank 2), got ranks {ranks:?}"
        )))),
    }
}

/// A scale tensor's f32 elements, checked to be contiguous and on `device`.
fn scale_slice<'a>(
    name: &str,
    storage: &'a Storage,
    layout: &Layout,
    device: &CudaDevice,
) -> candle_core::Result<CudaView<'a, f32>> {
    let Storage::Cuda(storage) = storage else {
        return Err(candle_core::Error::Msg(format!("{name}'s scales must be on the CUDA device of q, k and v")));
    };
    if storage.device.id() != device.id() {
        return Err(candle_core::Error::Msg(format!("{name}'s scales are on another CUDA device than q, k and v")));
    }
    let slice: &CudaSlice<f32> = match &storage.slice {
        CudaStorageSlice::F32(slice) => slice,
        _ => return Err(candle_core::Error::Msg(format!("{name}'s scales must be F32, got {:?}", storage.dtype()))),
    };
    Ok(slice.slice(contiguous(&format!("{name}'s scales"), layout)?))
}
