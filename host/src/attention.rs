//! The public entry point: load the kernels on a device, move tensors, run.

use crate::embedded::{self, ImageChoice, Load};
use crate::error::AttnError;
use crate::launch;
use crate::options::Options;
use crate::plan::Plan;
use crate::plan::target::Target;
use crate::tensor::{DeviceFp8Tensor, Fp8Input, Fp8Tensor, Output};
use crate::validate::validate;
use cudarc::driver::sys::{
    CUdevice_attribute, CUevent_flags, CUfunction_attribute, CUgraphInstantiate_flags, CUstreamCaptureMode,
};
use cudarc::driver::{CudaContext, CudaFunction, CudaGraph, CudaSlice, CudaStream, DevicePtr, LaunchConfig};
use kernels_gpu::kernels::{KERNELS, KernelInfo};
use kernels_gpu::params::{AttnParams, KvTiles};
use kernels_gpu::schedule;
use kernels_gpu::variant::{OutputDtype, Variant};
use std::sync::Arc;

/// Shared memory a block may use without opting in.
const DEFAULT_SMEM_LIMIT: u32 = 48 * 1024;

/// The bit pattern written over outputs before a checked run: a NaN read as
/// f16 (exponent 0x1F, mantissa 0x3C1) and as bf16 (exponent 0xFF,
/// mantissa 0x41), so it never passes as a value of either output type.
pub const POISON: u16 = 0x7FC1;

/// What was found on the device.
#[derive(Clone, Debug, serde::Serialize)]
pub struct DeviceInfo {
    /// Device ordinal.
    pub ordinal: usize,
    /// Device name, e.g. "NVIDIA H100 80GB HBM3".
    pub name: String,
    /// Compute capability (major, minor).
    pub capability: (i32, i32),
    /// Which embedded image was loaded, e.g. "sm_90a cubin".
    pub image: String,
    /// CUDA driver version, e.g. 13000 for 13.0.
    pub driver: i32,
    /// Streaming multiprocessors (SMs).
    pub multiprocessors: u32,
}

/// The kernels, loaded on one GPU, with one stream to run them on.
pub struct Attention {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    functions: Vec<(&'static KernelInfo, CudaFunction)>,
    /// Prepass kernels by entry name.
    prepasses: Vec<(&'static str, CudaFunction)>,
    info: DeviceInfo,
    /// The image loaded.
    load: Load,
    /// The sm_90a image is loaded (the Hopper-only variants are available).
    sm90a: bool,
}

/// Inputs on the device with the plan they were checked against, ready to
/// run.
pub struct DeviceProblem {
    plan: Plan,
    q: DeviceFp8Tensor,
    k: DeviceFp8Tensor,
    v: DeviceFp8Tensor,
    /// `q_scale[Hq]`, then `k_scale[Hkv]`, then `v_scale[Hkv]`.
    scales: CudaSlice<f32>,
    /// Scratch for kernels with a `kv_tiles` prepass (their K and `Vt`
    /// tiles, `kernels_gpu::params::KvTiles`); allocated only when the
    /// plan's kernel has one.
    kv_tiles: Option<CudaSlice<u8>>,
    /// Q's, K's and V's tensor maps (`kernels_gpu::params::TileMaps`) for
    /// kernels that copy their tiles by tensor copies (`split` on the
    /// sm_90a image).
    tile_maps: Option<CudaSlice<u64>>,
}

/// An output buffer on the device, of the problem's output type.
pub struct DeviceOutput {
    o: CudaSlice<u16>,
    dtype: OutputDtype,
    shape: [usize; 4],
}

impl DeviceOutput {
    /// The output's elements (f16 or bf16 bits, [`DeviceOutput::dtype`]),
    /// row-major `[batch, heads_q, seq_q, head_dim]`, on the stream of
    /// [`Attention::stream`]: work on another stream must wait for it.
    pub fn data(&self) -> &CudaSlice<u16> {
        &self.o
    }

    /// What the elements are.
    pub fn dtype(&self) -> OutputDtype {
        self.dtype
    }

    /// `[batch, heads_q, seq_q, head_dim]`.
    pub fn shape(&self) -> [usize; 4] {
        self.shape
    }
}

impl DeviceProblem {
    /// The plan it runs.
    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// Gives the input tensors back (Q, K, V), e.g. to run them with another
    /// plan through [`Attention::prepare`].
    pub fn into_inputs(self) -> [DeviceFp8Tensor; 3] {
        [self.q, self.k, self.v]
    }
}

impl Attention {
    /// Loads the embedded kernels on device `ordinal`: the image the
    /// environment variable `SDPA_IMAGE` names ([`ImageChoice::from_env`],
    /// e.g. `SDPA_IMAGE=sm_89` for the sm_89 kernels on a Hopper GPU), by
    /// default the device's own ([`ImageChoice::Auto`]). See
    /// [`Attention::with_image`].
    pub fn new(ordinal: usize) -> Result<Attention, AttnError> {
        Attention::with_image(ordinal, ImageChoice::from_env())
    }

    /// Loads the embedded image `image` names on device `ordinal`
    /// ([`embedded::choose`]). Only that image's kernels are then available:
    /// off the sm_90a image, not the Hopper-only ones, and plans and
    /// recommendations are made as on a GPU without it
    /// ([`Attention::target`]). Fails with [`AttnError::NoDriver`],
    /// [`AttnError::NoDevice`] or [`AttnError::UnsupportedDevice`] when no
    /// kernel can run on the device, and with [`AttnError::UnknownImage`] or
    /// [`AttnError::ImageUnsupported`] when the chosen image is not embedded
    /// or cannot run on it; never by a failed launch.
    pub fn with_image(ordinal: usize, image: ImageChoice) -> Result<Attention, AttnError> {
        if !launch::driver_present() {
            return Err(AttnError::NoDriver("libcuda could not be loaded".into()));
        }
        let count = CudaContext::device_count().map_err(|e| AttnError::NoDriver(e.to_string()))? as usize;
        if ordinal >= count {
            return Err(AttnError::NoDevice { ordinal, count });
        }
        let ctx = CudaContext::new(ordinal)?;
        let capability = ctx.compute_capability()?;
        let name = ctx.name()?;
        if capability < (8, 9) {
            return Err(AttnError::UnsupportedDevice { name, major: capability.0, minor: capability.1 });
        }
        let load = embedded::choose(&image, &name, capability)?;
        let module = ctx.load_module(load.module())?;
        let sm90a = load.is_sm90a();
        let mut functions = Vec::with_capacity(KERNELS.len());
        let mut prepasses = Vec::new();
        for kernel in KERNELS.iter().filter(|k| sm90a || !k.sm90a_only) {
            if let Some(pre) = kernel.prepass {
                prepasses.push((pre.entry, module.load_function(pre.entry)?));
            }
            let func = module.load_function(kernel.entry)?;
            if kernel.smem_bytes > DEFAULT_SMEM_LIMIT {
                func.set_attribute(
                    CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                    kernel.smem_bytes as i32,
                )?;
            }
            functions.push((kernel, func));
        }
        launch::disable_event_tracking(&ctx);
        // A stream of our own: CUDA graphs cannot capture the legacy default stream.
        let stream = ctx.new_stream()?;
        let multiprocessors = ctx.attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?;
        let info = DeviceInfo {
            ordinal,
            name,
            capability,
            image: load.describe(),
            driver: launch::driver_version()?,
            multiprocessors: u32::try_from(multiprocessors).unwrap_or(0),
        };
        Ok(Attention { ctx, stream, functions, prepasses, info, load, sm90a })
    }

    /// What a plan needs to know of this device.
    pub fn target(&self) -> Target {
        Target { sm90a: self.sm90a, multiprocessors: self.info.multiprocessors }
    }

    /// Validates the inputs and options and chooses the kernel that runs
    /// them on this device, once: the variant of `opts.variant`, by default
    /// the recommendation ([`crate::VariantChoice::Auto`]). The inputs may be
    /// on the host or on the device; the plan serves every input of the same
    /// shapes and scales.
    pub fn plan<T: Fp8Input>(&self, q: &T, k: &T, v: &T, opts: &Options) -> Result<Plan, AttnError> {
        Plan::new(validate(q, k, v, opts)?, opts.variant, self.target())
    }

    /// The device and the image loaded on it.
    pub fn device(&self) -> &DeviceInfo {
        &self.info
    }

    /// The image loaded, and how (cubin or PTX).
    pub fn load(&self) -> Load {
        self.load
    }

    /// The kernels of the loaded image, in `KERNELS` order: every kernel
    /// on the sm_90a image, elsewhere those not `sm90a_only`.
    pub fn kernels(&self) -> impl Iterator<Item = &'static KernelInfo> + '_ {
        self.functions.iter().map(|(k, _)| *k)
    }

    /// The variants with a kernel in the loaded image, in
    /// [`Variant::ALL`] order.
    pub fn variants(&self) -> Vec<Variant> {
        Variant::ALL.into_iter().filter(|v| self.kernels().any(|k| k.variant == *v)).collect()
    }

    /// The stream every upload, launch and download of this `Attention`
    /// runs on. Tensors made on it (`stream().clone_htod(..)`,
    /// `alloc_zeros`) need no further ordering; see [`Attention::prepare`]
    /// for tensors made on other streams.
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    /// Copies a host tensor to the device (its scales stay on the host too).
    pub fn to_device(&self, t: &Fp8Tensor) -> Result<DeviceFp8Tensor, AttnError> {
        Ok(DeviceFp8Tensor { data: self.stream.clone_htod(&t.data)?, shape: t.shape, scales: t.scales.clone() })
    }

    /// Takes inputs that are already on the device as the problem `plan`
    /// was made for ([`Attention::plan`]), without copying their codes: only
    /// their scales and the kernels' scratch and tensor maps are made. The
    /// tensors must match the plan ([`AttnError::NotPlanned`] otherwise)
    /// and live on this `Attention`'s device ([`AttnError::WrongDevice`]
    /// otherwise); when one was made on another stream, this stream waits
    /// (from now on) for the work queued there so far.
    /// [`DeviceProblem::into_inputs`] gives them back.
    pub fn prepare(
        &self,
        plan: &Plan,
        q: DeviceFp8Tensor,
        k: DeviceFp8Tensor,
        v: DeviceFp8Tensor,
    ) -> Result<DeviceProblem, AttnError> {
        plan.problem().check_inputs(&q, &k, &v)?;
        for (name, t) in [("q", &q), ("k", &k), ("v", &v)] {
            let ordinal = t.data.context().ordinal();
            if ordinal != self.info.ordinal {
                return Err(AttnError::WrongDevice { tensor: name, ordinal, expected: self.info.ordinal });
            }
            if t.data.stream().cu_stream() != self.stream.cu_stream() {
                self.stream.join(t.data.stream())?;
            }
        }
        self.problem_on_device(plan, q, k, v)
    }

    /// Validates and runs attention on host tensors, returning the output
    /// on the host, as f16 or bf16 (`opts.output`): [`Attention::plan`],
    /// [`Attention::upload`], [`Attention::run`], [`Attention::download`].
    pub fn forward(&self, q: &Fp8Tensor, k: &Fp8Tensor, v: &Fp8Tensor, opts: &Options) -> Result<Output, AttnError> {
        let plan = self.plan(q, k, v, opts)?;
        let dev = self.upload(&plan, q, k, v)?;
        let mut out = self.alloc_output(&dev)?;
        self.run(&dev, &mut out)?;
        self.download(&out)
    }

    /// Copies host inputs to the device as the problem `plan` was made for
    /// ([`Attention::plan`]; [`AttnError::NotPlanned`] for other shapes or
    /// scales).
    pub fn upload(&self, plan: &Plan, q: &Fp8Tensor, k: &Fp8Tensor, v: &Fp8Tensor) -> Result<DeviceProblem, AttnError> {
        plan.problem().check_inputs(q, k, v)?;
        self.problem_on_device(plan, self.to_device(q)?, self.to_device(k)?, self.to_device(v)?)
    }

    /// A plan on its device inputs: their scales copied, the kernel's
    /// scratch allocated and tensor maps encoded.
    fn problem_on_device(
        &self,
        plan: &Plan,
        q: DeviceFp8Tensor,
        k: DeviceFp8Tensor,
        v: DeviceFp8Tensor,
    ) -> Result<DeviceProblem, AttnError> {
        let (p, kernel) = (plan.problem(), plan.kernel());
        let tiles = kv_tiles_of(plan);
        let kv_tiles = if kernel.prepass.is_some() && !self.prepasses.is_empty() {
            Some(self.stream.alloc_zeros::<u8>(tiles.total_bytes() as usize)?)
        } else {
            None
        };
        // The split family (Q, K, V) and `wgmma` (K, at D = 64) on sm_90a
        // copy tiles by tensor copies.
        let tile_maps = if self.sm90a && kernel.variant.uses_tile_maps(p.head_dim as u32) {
            let (d, tiles) = (p.head_dim as u32, kernel.tiles);
            let (q_heads, kv_heads) = ((p.batch * p.heads_q) as u32, (p.batch * p.heads_kv) as u32);
            let map = |t: &DeviceFp8Tensor, rows: usize, heads: u32, box_rows: u32| {
                let address = t.data.device_ptr(&self.stream).0;
                launch::encode_tile_map(address, d, rows as u32, heads, box_rows, kernel.pair_rows)
            };
            let maps = [
                map(&q, p.seq_q, q_heads, tiles.block_m)?,
                map(&k, p.seq_kv, kv_heads, tiles.block_n)?,
                map(&v, p.seq_kv, kv_heads, tiles.block_n)?,
            ];
            Some(self.stream.clone_htod(&maps.concat())?)
        } else {
            None
        };
        let scales = self.stream.clone_htod(&p.scales)?;
        Ok(DeviceProblem { plan: plan.clone(), q, k, v, scales, kv_tiles, tile_maps })
    }

    /// Allocates an output buffer for `dev` (contents undefined until a run).
    pub fn alloc_output(&self, dev: &DeviceProblem) -> Result<DeviceOutput, AttnError> {
        let p = dev.plan.problem();
        let o = self.stream.alloc_zeros::<u16>(p.q_len())?;
        Ok(DeviceOutput { o, dtype: p.output, shape: p.q_shape() })
    }

    /// Overwrites every output element with a NaN ([`POISON`]), so an
    /// element a kernel fails to write cannot pass a check.
    pub fn poison(&self, out: &mut DeviceOutput) -> Result<(), AttnError> {
        let poison = vec![POISON; out.o.len()];
        self.stream.memcpy_htod(&poison, &mut out.o)?;
        Ok(())
    }

    /// Launches the plan's kernel (asynchronously) into `out`.
    pub fn run(&self, dev: &DeviceProblem, out: &mut DeviceOutput) -> Result<(), AttnError> {
        self.launch(dev, out, Launch::Ordered)
    }

    /// As [`Attention::run`], but as a programmatic dependent launch: the
    /// kernel's blocks may be scheduled, and compute their indices, while
    /// the kernel before it on the stream is still running; they wait for it
    /// (`griddepcontrol.wait`) before their first global memory access. It
    /// hides part of the launch gap between back-to-back kernels (sm_90a
    /// image only; elsewhere an error).
    pub fn run_overlapped(&self, dev: &DeviceProblem, out: &mut DeviceOutput) -> Result<(), AttnError> {
        self.launch(dev, out, Launch::Overlapped)
    }

    /// Refuses overlapped launches where the loaded image lacks
    /// `griddepcontrol` (anything but sm_90a).
    fn check_launch(&self, dev: &DeviceProblem, how: Launch) -> Result<(), AttnError> {
        if how == Launch::Overlapped && !self.sm90a {
            return Err(AttnError::VariantUnavailable {
                variant: dev.plan.variant().name(),
                reason: format!("overlapped launches need the sm_90a image; this device loaded {}", self.info.image),
            });
        }
        Ok(())
    }

    fn launch(&self, dev: &DeviceProblem, out: &mut DeviceOutput, how: Launch) -> Result<(), AttnError> {
        self.check_launch(dev, how)?;
        let overlap = how == Launch::Overlapped;
        let (p, kernel) = (dev.plan.problem(), dev.plan.kernel());
        if out.shape != p.q_shape() || out.dtype != p.output {
            return Err(AttnError::ShapeMismatch(format!(
                "output buffer is {:?} {} but the problem needs {:?} {}",
                out.shape,
                out.dtype.name(),
                p.q_shape(),
                p.output.name()
            )));
        }
        let func = self.functions.iter().find(|(k, _)| **k == *kernel).map(|(_, f)| f).ok_or_else(|| {
            AttnError::VariantUnavailable {
                variant: kernel.variant.name(),
                reason: format!("{} needs an sm_90a (Hopper) GPU; this one loaded {}", kernel.entry, self.info.image),
            }
        })?;
        let scales = dev.scales.device_ptr(&self.stream).0;
        let f32_size = std::mem::size_of::<f32>() as u64;
        let params = AttnParams {
            q: dev.q.data.device_ptr(&self.stream).0,
            k: dev.k.data.device_ptr(&self.stream).0,
            v: dev.v.data.device_ptr(&self.stream).0,
            o: out.o.device_ptr(&self.stream).0,
            q_scale: scales,
            k_scale: scales + p.heads_q as u64 * f32_size,
            v_scale: scales + (p.heads_q + p.heads_kv) as u64 * f32_size,
            kv_tiles: dev.kv_tiles.as_ref().map_or(0, |t| t.device_ptr(&self.stream).0),
            batch: p.batch as u32,
            heads_q: p.heads_q as u32,
            heads_kv: p.heads_kv as u32,
            seq_q: p.seq_q as u32,
            seq_kv: p.seq_kv as u32,
            softmax_scale: p.softmax_scale,
            causal: p.causal as u32,
            fused_exponent: p.fused_exponent as u32,
            kv_group: kernels_gpu::schedule::kv_group(p.heads_q as u32, p.heads_kv as u32),
            tile_maps: dev.tile_maps.as_ref().map_or(0, |m| m.device_ptr(&self.stream).0),
        };
        if let Some(pre) = kernel.prepass {
            let prepass = self.prepasses.iter().find(|(e, _)| *e == pre.entry).map(|(_, f)| f);
            let (Some(prepass), true) = (prepass, params.kv_tiles != 0) else {
                return Err(AttnError::VariantUnavailable {
                    variant: kernel.variant.name(),
                    reason: format!("its prepass {} is not loaded", pre.entry),
                });
            };
            let cfg = LaunchConfig {
                grid_dim: (kv_tiles_of(&dev.plan).tiles_per_head, p.heads_kv as u32, p.batch as u32),
                block_dim: (pre.threads, 1, 1),
                shared_mem_bytes: pre.smem_bytes,
            };
            launch::launch(&self.stream, prepass, cfg, params, overlap)?;
        }
        let tiles = kernel.tiles;
        let cfg = LaunchConfig {
            grid_dim: schedule::grid(tiles.block_m, p.batch as u32, p.heads_q as u32, p.seq_q as u32, p.causal),
            block_dim: (tiles.threads(), 1, 1),
            shared_mem_bytes: kernel.smem_bytes,
        };
        launch::launch(&self.stream, func, cfg, params, overlap)?;
        Ok(())
    }

    /// Waits for the stream and copies `out` to the host.
    pub fn download(&self, out: &DeviceOutput) -> Result<Output, AttnError> {
        let bits = self.stream.clone_dtoh(&out.o)?;
        self.stream.synchronize()?;
        Ok(Output { bits, dtype: out.dtype, shape: out.shape })
    }

    /// Device time in milliseconds of `launches` back-to-back runs, measured
    /// with CUDA events around them (after the stream drains).
    pub fn time_runs(&self, dev: &DeviceProblem, out: &mut DeviceOutput, launches: usize) -> Result<f32, AttnError> {
        self.time_between_events(|| {
            for _ in 0..launches {
                self.run(dev, out)?;
            }
            Ok(())
        })
    }

    /// Records `launches` runs, launched as `how`, into a CUDA graph
    /// (nothing runs yet), so that replaying it costs one launch of host
    /// time instead of `launches`.
    pub fn capture(
        &self,
        dev: &DeviceProblem,
        out: &mut DeviceOutput,
        launches: usize,
        how: Launch,
    ) -> Result<CapturedRuns, AttnError> {
        self.check_launch(dev, how)?;
        self.stream.synchronize()?;
        self.stream.begin_capture(CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)?;
        let recorded = (0..launches).try_for_each(|_| self.launch(dev, out, how));
        let graph = self.stream.end_capture(CUgraphInstantiate_flags(0))?;
        recorded?;
        let graph = graph.ok_or_else(|| AttnError::ShapeMismatch("graph capture recorded nothing".into()))?;
        graph.upload()?;
        Ok(CapturedRuns { graph, launches })
    }

    /// Device time in milliseconds of one replay of a captured graph.
    pub fn time_replay(&self, runs: &CapturedRuns) -> Result<f32, AttnError> {
        self.time_between_events(|| Ok(runs.graph.launch()?))
    }

    fn time_between_events(&self, work: impl FnOnce() -> Result<(), AttnError>) -> Result<f32, AttnError> {
        let start = self.ctx.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))?;
        let stop = self.ctx.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))?;
        self.stream.synchronize()?;
        start.record(&self.stream)?;
        work()?;
        stop.record(&self.stream)?;
        stop.synchronize()?;
        Ok(start.elapsed_ms(&stop)?)
    }
}

/// How a run is launched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Launch {
    /// After the previous kernel on the stream ([`Attention::run`]).
    Ordered,
    /// As a programmatic dependent launch ([`Attention::run_overlapped`]).
    Overlapped,
}

/// Runs recorded into a CUDA graph by [`Attention::capture`].
pub struct CapturedRuns {
    graph: CudaGraph,
    /// How many kernel launches one replay performs.
    pub launches: usize,
}

/// The layout of a plan's `kv_tiles` scratch (one prepass block per tile).
fn kv_tiles_of(plan: &Plan) -> KvTiles {
    let (p, pv_e4m3) = (plan.problem(), plan.variant().pv_e4m3());
    KvTiles::new(p.head_dim as u32, p.batch as u32, p.heads_kv as u32, p.seq_kv as u32, pv_e4m3)
}
