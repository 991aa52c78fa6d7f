//! The public entry point: load the kernels on a device, move tensors, run.

use crate::device::{
    DeviceScales, Fp8View, MAP_SLOTS, MapSlot, MapSlots, OutputViewMut, PackedSeqs, PagedKv, RowStrides, RunExtras,
    ScaleLayout, TENSOR_ALIGN, TileMapKey, Workspace, WorkspaceSize, check_align, check_device, kv_tiles_of,
};
use crate::embedded::{self, ImageChoice, Load};
use crate::error::AttnError;
use crate::launch;
use crate::launch::staging::{MAP_WORDS, MapStaging};
use crate::options::{Layout, Options, VariantChoice};
use crate::plan::Plan;
use crate::plan::target::Target;
use crate::tensor::{DeviceFp8Tensor, Fp8Input, Fp8Tensor, Output};
use crate::validate::{Problem, validate};
use cudarc::driver::sys::{
    CUdevice_attribute, CUevent_flags, CUfunction_attribute, CUgraphInstantiate_flags, CUstreamCaptureMode,
    CUstreamCaptureStatus,
};
use cudarc::driver::{
    CudaContext, CudaFunction, CudaGraph, CudaSlice, CudaStream, DevicePtr, DevicePtrMut, LaunchConfig,
};
use kernels_gpu::kernels::{KERNELS, KernelInfo};
use kernels_gpu::params::{self, AttnParams, TILE_KEYS, padded_keys};
use kernels_gpu::schedule::{self, FastDiv};
use kernels_gpu::variant::{OutputDtype, Variant};
use std::sync::Arc;

/// Shared memory a block may use without opting in.
const DEFAULT_SMEM_LIMIT: u32 = 48 * 1024;

/// The bit pattern written over outputs before a checked run: a NaN read as
/// f16 (exponent 0x1F, mantissa 0x3C1) and as bf16 (exponent 0xFF,
/// mantissa 0x41), so it never passes as a value of either output type.
/// Test tooling, hidden from the documented API.
#[doc(hidden)]
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
    /// Prepass and merge kernels by entry name.
    passes: Vec<(&'static str, CudaFunction)>,
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
    /// The kernel's scratch (`WorkspaceSize::scratch_bytes`); allocated
    /// only when it needs one.
    scratch: Option<CudaSlice<u8>>,
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
        // This context object is the library's own: see `disable_event_tracking`.
        launch::disable_event_tracking(&ctx);
        // A stream of our own: CUDA graphs cannot capture the legacy default stream.
        let stream = ctx.new_stream()?;
        Attention::load_on(stream, image)
    }

    /// Loads the embedded image `image` names (as [`Attention::with_image`])
    /// on the context of the caller's `stream`, and runs every upload,
    /// launch, download and capture of the returned `Attention` on that
    /// stream: a framework's current stream (see
    /// [`crate::raw::borrow_stream`] for a raw `CUstream`). The
    /// context's cudarc event tracking is left as the caller set it: where
    /// it is on (cudarc's default), uses of cudarc buffers are ordered
    /// across streams by cudarc's events; where it is off, the caller
    /// orders them. CUDA-graph capture forbids waiting on events recorded
    /// outside it, which cudarc does for buffers it tracks: to capture runs
    /// ([`Attention::capture`], or `run_views` between the stream's
    /// `begin_capture` and `end_capture`), make their buffers with event
    /// tracking off, or pass raw views ([`crate::raw`]). The legacy
    /// default stream cannot be captured.
    pub fn on_stream(stream: Arc<CudaStream>, image: ImageChoice) -> Result<Attention, AttnError> {
        if !launch::driver_present() {
            return Err(AttnError::NoDriver("libcuda could not be loaded".into()));
        }
        Attention::load_on(stream, image)
    }

    /// The same loaded kernels, for work on `stream` instead: no module is
    /// loaded again, so a binding can keep one per framework stream. The
    /// stream must belong to this `Attention`'s CUDA context
    /// ([`AttnError::OtherContext`] otherwise).
    pub fn for_stream(&self, stream: Arc<CudaStream>) -> Result<Attention, AttnError> {
        if stream.context().cu_ctx() != self.ctx.cu_ctx() {
            return Err(AttnError::OtherContext { ordinal: stream.context().ordinal(), expected: self.info.ordinal });
        }
        Ok(Attention {
            ctx: self.ctx.clone(),
            stream,
            functions: self.functions.clone(),
            passes: self.passes.clone(),
            info: self.info.clone(),
            load: self.load,
            sm90a: self.sm90a,
        })
    }

    /// Loads the kernels of the image `image` names on `stream`'s context,
    /// for work on `stream`.
    fn load_on(stream: Arc<CudaStream>, image: ImageChoice) -> Result<Attention, AttnError> {
        let ctx = stream.context().clone();
        let ordinal = ctx.ordinal();
        let capability = ctx.compute_capability()?;
        let name = ctx.name()?;
        if capability < (8, 9) {
            return Err(AttnError::UnsupportedDevice { name, major: capability.0, minor: capability.1 });
        }
        let load = embedded::choose(&image, &name, capability)?;
        let module = ctx.load_module(load.module())?;
        let sm90a = load.is_sm90a();
        let mut functions = Vec::with_capacity(KERNELS.len());
        let mut passes = Vec::new();
        for kernel in KERNELS.iter().filter(|k| sm90a || !k.sm90a_only) {
            let merge = kernel.merge.map(|m| m.entry(kernel.output));
            for entry in kernel.prepass.map(|pre| pre.entry).into_iter().chain(merge) {
                passes.push((entry, module.load_function(entry)?));
            }
            // The twins (packed, over their scores), found by their entries
            // like the passes.
            for (entry, _) in kernel.twins() {
                passes.push((entry, with_smem(module.load_function(entry)?, kernel.smem_bytes)?));
            }
            functions.push((kernel, with_smem(module.load_function(kernel.entry)?, kernel.smem_bytes)?));
        }
        let multiprocessors = ctx.attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?;
        let info = DeviceInfo {
            ordinal,
            name,
            capability,
            image: load.describe(),
            driver: launch::driver_version()?,
            multiprocessors: u32::try_from(multiprocessors).unwrap_or(0),
        };
        Ok(Attention { ctx, stream, functions, passes, info, load, sm90a })
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

    /// As [`Attention::plan`] from the shapes alone (Q `[B, Hq, Sq, D]`, K
    /// and V `[B, Hkv, Skv, D]`), for inputs whose scales live on the device
    /// ([`Attention::run_views`]): no scale value is read, so none is
    /// checked (see [`crate::device::DeviceScales`]); each block of the
    /// kernels picks its exponent from the scales it reads.
    pub fn plan_shapes(&self, q: [usize; 4], k: [usize; 4], v: [usize; 4], opts: &Options) -> Result<Plan, AttnError> {
        Plan::new(Problem::new(q, k, v, opts)?, opts.variant, self.target())
    }

    /// The plan for Q `[B, Hq, Sq, D]` against the paged cache `kv`
    /// ([`Attention::run_paged`]): `decode`, the variant that reads pages,
    /// at any query length: one query token or a few, or a prefill chunk
    /// over a cached prefix (each key/value head's query heads folded
    /// into one block's rows, every block walking its rows' keys: slower
    /// per query than the prefill kernels on long chunks). `opts.variant`
    /// must be `Auto` or `decode`; another is refused
    /// ([`AttnError::VariantUnavailable`]).
    pub fn plan_paged(&self, q: [usize; 4], kv: &PagedKv, opts: &Options) -> Result<Plan, AttnError> {
        let kv_shape = kv.kv_shape();
        match opts.variant {
            VariantChoice::Auto | VariantChoice::Fixed(Variant::Decode) => {
                let opts = Options { variant: Variant::Decode.into(), ..*opts };
                self.plan_shapes(q, kv_shape, kv_shape, &opts)
            }
            VariantChoice::Fixed(other) => Err(pages_need_decode(other)),
        }
    }

    /// A workspace that serves `plan` ([`WorkspaceSize::of`]), allocated
    /// now on this `Attention`'s stream.
    pub fn workspace(&self, plan: &Plan) -> Result<Workspace, AttnError> {
        self.alloc_workspace(WorkspaceSize::of(plan, self.target()))
    }

    /// Enlarges `ws` where it is too small for `plan` (reallocating it, on
    /// this stream; its earlier uses on the stream finish first), and leaves
    /// it as it is where it already serves.
    pub fn grow_workspace(&self, ws: &mut Workspace, plan: &Plan) -> Result<(), AttnError> {
        let needed = WorkspaceSize::of(plan, self.target());
        check_device("workspace", ws.ordinal, self.info.ordinal)?;
        if !ws.size.holds(needed) {
            *ws = self.alloc_workspace(ws.size.max(needed))?;
        }
        Ok(())
    }

    fn alloc_workspace(&self, size: WorkspaceSize) -> Result<Workspace, AttnError> {
        let scratch = match size.scratch_bytes {
            0 => None,
            bytes => Some(self.stream.alloc_zeros::<u8>(bytes)?),
        };
        let (tile_maps, staging) = if size.tile_maps {
            let maps = self.stream.alloc_zeros::<u64>(MAP_SLOTS * MAP_WORDS)?;
            (Some(maps), Some(MapStaging::new(&self.ctx, MAP_SLOTS)?))
        } else {
            (None, None)
        };
        Ok(Workspace {
            ordinal: self.info.ordinal,
            size,
            scratch,
            tile_maps,
            staging,
            map_slots: MapSlots::new(MAP_SLOTS),
        })
    }

    /// Runs `plan` on device views, asynchronously on this `Attention`'s
    /// stream: Q, K and V codes, their scales on the device and the output,
    /// all borrowed, with the scratch from `ws`. Nothing is allocated or
    /// copied, except Q's, K's and V's tensor maps for addresses `ws` holds
    /// no maps for (see [`Workspace`]).
    ///
    /// The views must have the plan's shapes ([`AttnError::NotPlanned`]),
    /// O the plan's output type, every buffer this device
    /// ([`AttnError::WrongDevice`]), Q, K, V and O 16-byte alignment and the
    /// scales the lengths of their layout ([`ScaleLayout::lens`]). A plan
    /// made by [`Attention::plan`] from host tensors may be run here too:
    /// it keeps the exponent its scales allowed, so the device scales must
    /// be those values.
    #[allow(clippy::too_many_arguments)]
    pub fn run_views(
        &self,
        plan: &Plan,
        q: &Fp8View,
        k: &Fp8View,
        v: &Fp8View,
        scales: &DeviceScales,
        out: &mut OutputViewMut,
        ws: &mut Workspace,
    ) -> Result<(), AttnError> {
        self.run_views_with(plan, q, k, v, scales, out, ws, RunExtras::new())
    }

    /// [`Attention::run_views`] with a `decode` plan's extras: per-batch
    /// key lengths, the log-sum-exp output ([`RunExtras`]). Extras on a
    /// plan of another variant are refused
    /// ([`AttnError::VariantUnavailable`]).
    #[allow(clippy::too_many_arguments)]
    pub fn run_views_with(
        &self,
        plan: &Plan,
        q: &Fp8View,
        k: &Fp8View,
        v: &Fp8View,
        scales: &DeviceScales,
        out: &mut OutputViewMut,
        ws: &mut Workspace,
        extras: RunExtras,
    ) -> Result<(), AttnError> {
        self.check_kv(k, v, plan.problem().kv_shape(), plan.problem().layout)?;
        self.run_on(plan, q, KvCache::Contiguous(k, v), scales, out, ws, extras)
    }

    /// Runs a `decode` plan on a paged KV cache ([`PagedKv`]), planned by
    /// [`Attention::plan_paged`] (or with [`PagedKv::kv_shape`]); otherwise
    /// as [`Attention::run_views_with`].
    /// Each batch should say how many of its keys it holds
    /// ([`RunExtras::seq_used_k`]); without, every batch sees all
    /// `max_pages * page_size` keys its table names. A plan of another
    /// variant is refused ([`AttnError::VariantUnavailable`]).
    #[allow(clippy::too_many_arguments)]
    pub fn run_paged(
        &self,
        plan: &Plan,
        q: &Fp8View,
        kv: &PagedKv,
        scales: &DeviceScales,
        out: &mut OutputViewMut,
        ws: &mut Workspace,
        extras: RunExtras,
    ) -> Result<(), AttnError> {
        let (p, kernel) = (plan.problem(), plan.kernel());
        if kernel.merge.is_none() {
            return Err(pages_need_decode(kernel.variant));
        }
        if kv.kv_shape() != p.kv_shape() {
            return Err(AttnError::NotPlanned(format!(
                "the paged cache reads as {:?}, the plan's K/V is {:?}",
                kv.kv_shape(),
                p.kv_shape()
            )));
        }
        kv.check_devices(self.info.ordinal)?;
        self.run_on(plan, q, KvCache::Paged(kv), scales, out, ws, extras)
    }

    /// The plan for a packed batch of sequences ([`PackedSeqs`]): Q
    /// `[total_q, heads_q, head_dim]`, K and V `[total_k, heads_kv,
    /// head_dim]` (`Problem::packed`). It runs on the `wgmma` variants
    /// (`wgmma` unless `opts` names `wgmma-fp8pv`), on sm_90a.
    pub fn plan_packed(
        &self,
        q: [usize; 3],
        k: [usize; 3],
        v: [usize; 3],
        seqs: &PackedSeqs,
        opts: &Options,
    ) -> Result<Plan, AttnError> {
        Plan::new(Problem::packed(q, k, v, seqs.batch(), seqs.max_seqlen(), opts)?, opts.variant, self.target())
    }

    /// Runs a plan from [`Attention::plan_packed`] on a packed batch: Q, K
    /// and V views from [`Fp8View::packed`], O from
    /// [`OutputViewMut::packed`], the prefix sums the plan was made for
    /// (the same batch and longest lengths); the log-sum-exp, if asked
    /// ([`RunExtras::lse`]), is `[total_q, heads_q]`. Otherwise as
    /// [`Attention::run_views`]. Causal masking aligns each sequence's last
    /// query with its last key.
    #[allow(clippy::too_many_arguments)]
    pub fn run_packed(
        &self,
        plan: &Plan,
        q: &Fp8View,
        k: &Fp8View,
        v: &Fp8View,
        seqs: &PackedSeqs,
        scales: &DeviceScales,
        out: &mut OutputViewMut,
        ws: &mut Workspace,
        extras: RunExtras,
    ) -> Result<(), AttnError> {
        let p = plan.problem();
        let Some((_, kv_shape)) = p.packed_shapes() else {
            return Err(AttnError::NotPlanned("the plan is not a packed batch's (Attention::plan_packed)".into()));
        };
        if seqs.batch() != p.batch || seqs.max_seqlen() != [p.seq_q, p.seq_kv] {
            return Err(AttnError::NotPlanned(format!(
                "the prefix sums are {} sequences of at most {:?} rows, the plan's {} of at most {:?}",
                seqs.batch(),
                seqs.max_seqlen(),
                p.batch,
                [p.seq_q, p.seq_kv]
            )));
        }
        self.check_kv(k, v, kv_shape, p.layout)?;
        seqs.check_devices(self.info.ordinal)?;
        self.run_on(plan, q, KvCache::Packed(k, v, seqs), scales, out, ws, extras)
    }

    /// Refuses K and V views not of `shape` and `layout` or not on this
    /// device.
    fn check_kv(&self, k: &Fp8View, v: &Fp8View, shape: [usize; 4], layout: Layout) -> Result<(), AttnError> {
        for (name, view) in [("k", k), ("v", v)] {
            if view.shape() != shape {
                return Err(AttnError::NotPlanned(format!("{name} is {:?}, the plan's is {shape:?}", view.shape())));
            }
            check_layout(name, view.layout(), layout)?;
            check_device(name, view.ordinal(), self.info.ordinal)?;
        }
        Ok(())
    }

    /// The checks and the launch that [`Attention::run_views_with`],
    /// [`Attention::run_paged`] and [`Attention::run_packed`] share (K and
    /// V already checked against the plan).
    #[allow(clippy::too_many_arguments)]
    fn run_on(
        &self,
        plan: &Plan,
        q: &Fp8View,
        kv: KvCache,
        scales: &DeviceScales,
        out: &mut OutputViewMut,
        ws: &mut Workspace,
        mut extras: RunExtras,
    ) -> Result<(), AttnError> {
        let p = plan.problem();
        extras.check(plan, self.info.ordinal)?;
        let q_shape = p.packed_shapes().map_or(p.q_shape(), |(q, _)| q);
        if q.shape() != q_shape {
            return Err(AttnError::NotPlanned(format!("q is {:?}, the plan's is {q_shape:?}", q.shape())));
        }
        check_layout("q", q.layout(), p.layout)?;
        check_layout("o", out.layout(), p.layout)?;
        check_device("q", q.ordinal(), self.info.ordinal)?;
        check_output(out.shape(), out.dtype(), p)?;
        check_device("o", out.ordinal(), self.info.ordinal)?;
        scales.check(p.q_shape(), p.kv_shape(), self.info.ordinal)?;
        check_device("workspace", ws.ordinal, self.info.ordinal)?;
        let needed = WorkspaceSize::of(plan, self.target());
        if !ws.size.holds(needed) {
            return Err(AttnError::WorkspaceTooSmall { needed, available: ws.size });
        }
        let stream = &self.stream;
        let (k, v) = match &kv {
            KvCache::Contiguous(k, v) | KvCache::Packed(k, v, _) => (*k, *v),
            KvCache::Paged(paged) => (&paged.k, &paged.v),
        };
        let (q_at, _q_use) = q.codes.address(stream);
        let (k_at, _k_use) = k.codes.address(stream);
        let (v_at, _v_use) = v.codes.address(stream);
        let (o_at, _o_use) = out.bits.address(stream);
        let (q_scale, _qs_use) = scales.q.address(stream);
        let (k_scale, _ks_use) = scales.k.address(stream);
        let (v_scale, _vs_use) = scales.v.address(stream);
        let (seq_used_k, _lens_use) = match &extras.seq_used_k {
            Some(lens) => lens.address(stream),
            None => (0, None),
        };
        let (lse, _lse_use) = match &mut extras.lse {
            Some(lse) => lse.address(stream),
            None => (0, None),
        };
        let (page_table, _table_use) = match &kv {
            KvCache::Paged(paged) => paged.table.address(stream),
            KvCache::Contiguous(..) | KvCache::Packed(..) => (0, None),
        };
        let ((cu_seqlens_q, _cu_q_use), (cu_seqlens_k, _cu_k_use)) = match &kv {
            KvCache::Packed(_, _, seqs) => (seqs.cu_seqlens_q.address(stream), seqs.cu_seqlens_k.address(stream)),
            KvCache::Contiguous(..) | KvCache::Paged(..) => ((0, None), (0, None)),
        };
        for (name, address) in [("q", q_at), ("k", k_at), ("v", v_at), ("o", o_at)] {
            check_align(name, address, TENSOR_ALIGN)?;
        }
        for (name, address) in [("q_scale", q_scale), ("k_scale", k_scale), ("v_scale", v_scale)] {
            check_align(name, address, align_of::<f32>() as u64)?;
        }
        let strides = row_strides(plan, q, &kv)?;
        let map_key = TileMapKey::of(plan, [q_at, k_at, v_at], strides.kv);
        let map_key = match &kv {
            KvCache::Paged(paged) => map_key.paged(paged),
            KvCache::Contiguous(..) | KvCache::Packed(..) => map_key,
        };
        let tile_maps = if needed.tile_maps { self.tile_maps_in(ws, plan, map_key)? } else { 0 };
        let (scratch, _scratch_use) = match ws.scratch.as_ref().filter(|_| needed.scratch_bytes > 0) {
            Some(t) => {
                let (address, guard) = t.device_ptr(stream);
                (address, Some(guard))
            }
            None => (0, None),
        };
        let paging = match &kv {
            KvCache::Paged(paged) => Paging {
                table: page_table,
                max_pages: paged.max_pages() as u32,
                page_shift: paged.page_size().trailing_zeros(),
                pages: paged.pages() as u32,
            },
            KvCache::Contiguous(..) | KvCache::Packed(..) => Paging::NONE,
        };
        // (`[B, S, H, D]` tensors run as packed sequences of equal lengths,
        // without prefix sums.)
        let packing = match p.interleaved_rows() {
            Some(rows) => {
                Packing { cu_seqlens_q, cu_seqlens_k, total_q: rows.total_q as u32, total_k: rows.total_k as u32 }
            }
            None => Packing::NONE,
        };
        let buffers = Buffers {
            q: q_at,
            k: k_at,
            v: v_at,
            o: o_at,
            scales: [q_scale, k_scale, v_scale],
            scale_batch_stride: scales.layout().batch_stride(p.heads_kv),
            scratch,
            tile_maps,
            seq_used_k,
            lse,
            paging,
            packed: packing,
            strides,
        };
        self.launch_buffers(plan, &buffers, Launch::Ordered)
    }

    /// The device address of `ws`'s tensor maps for Q, K and V at
    /// `addresses`: the slot that holds them, copying nothing, or else one
    /// they are written into, as [`Workspace`] describes.
    fn tile_maps_in(&self, ws: &mut Workspace, plan: &Plan, key: TileMapKey) -> Result<u64, AttnError> {
        let (Some(maps), Some(staging)) = (ws.tile_maps.as_mut(), ws.staging.as_mut()) else {
            return Err(AttnError::WorkspaceTooSmall {
                needed: WorkspaceSize::of(plan, self.target()),
                available: ws.size,
            });
        };
        let capturing = self.stream.capture_status()? != CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE;
        let base = maps.device_ptr(&self.stream).0;
        let slot_address = |index: usize| base + (index * MAP_WORDS * size_of::<u64>()) as u64;
        match ws.map_slots.find(key, capturing)? {
            MapSlot::Ready(index) => Ok(slot_address(index)),
            MapSlot::Staged(index) => {
                staging.copy(index, slot_address(index), &self.stream)?;
                if !capturing {
                    ws.map_slots.written(index);
                }
                Ok(slot_address(index))
            }
            MapSlot::Vacant(index) => {
                let words = encode_tile_maps(&key)?;
                if capturing {
                    // The graph copies from the pinned source at each replay.
                    staging.write(index, &words);
                    staging.copy(index, slot_address(index), &self.stream)?;
                } else {
                    let slot = index * MAP_WORDS..(index + 1) * MAP_WORDS;
                    self.stream.memcpy_htod(&words, &mut maps.slice_mut(slot))?;
                }
                ws.map_slots.fill(index, key, capturing);
                Ok(slot_address(index))
            }
        }
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
        let size = WorkspaceSize::of(plan, self.target());
        let scratch = match size.scratch_bytes {
            0 => None,
            bytes => Some(self.stream.alloc_zeros::<u8>(bytes)?),
        };
        let tile_maps = if size.tile_maps {
            let addresses = [&q, &k, &v].map(|t| t.data.device_ptr(&self.stream).0);
            Some(self.stream.clone_htod(&encode_tile_maps(&TileMapKey::of(
                plan,
                addresses,
                Strides::dense(plan.problem()).kv,
            ))?)?)
        } else {
            None
        };
        let scales = self.stream.clone_htod(&plan.problem().scales)?;
        Ok(DeviceProblem { plan: plan.clone(), q, k, v, scales, scratch, tile_maps })
    }

    /// Allocates an output buffer for `dev` (contents undefined until a run).
    pub fn alloc_output(&self, dev: &DeviceProblem) -> Result<DeviceOutput, AttnError> {
        let p = dev.plan.problem();
        let o = self.stream.alloc_zeros::<u16>(p.q_len())?;
        Ok(DeviceOutput { o, dtype: p.output, shape: p.q_shape() })
    }

    /// Overwrites every output element with a NaN ([`POISON`]), so an
    /// element a kernel fails to write cannot pass a check.
    #[doc(hidden)]
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
    /// image only; elsewhere an error). (A call's own second kernel, the
    /// attention after its prepass or the merge after `decode`, is launched
    /// so on sm_90a by every run.)
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
        let p = dev.plan.problem();
        check_output(out.shape, out.dtype, p)?;
        // cudarc's guards record each buffer's use (where the context tracks
        // events, `Attention::on_stream`) when dropped: after the launch.
        let stream = &self.stream;
        let (scales, _scales_use) = dev.scales.device_ptr(stream);
        let (q, _q_use) = dev.q.data.device_ptr(stream);
        let (k, _k_use) = dev.k.data.device_ptr(stream);
        let (v, _v_use) = dev.v.data.device_ptr(stream);
        let (o, _o_use) = out.o.device_ptr_mut(stream);
        let f32_size = size_of::<f32>() as u64;
        let buffers = Buffers {
            q,
            k,
            v,
            o,
            scales: [scales, scales + p.heads_q as u64 * f32_size, scales + (p.heads_q + p.heads_kv) as u64 * f32_size],
            scale_batch_stride: ScaleLayout::PerHead.batch_stride(p.heads_kv),
            scratch: dev.scratch.as_ref().map_or(0, |t| t.device_ptr(stream).0),
            tile_maps: dev.tile_maps.as_ref().map_or(0, |m| m.device_ptr(stream).0),
            seq_used_k: 0,
            lse: 0,
            paging: Paging::NONE,
            packed: Packing::NONE,
            strides: Strides::dense(p),
        };
        self.launch_buffers(&dev.plan, &buffers, how)
    }

    /// Launches `plan`'s kernel (and its prepass) on `buffers`, which the
    /// caller checked against the plan.
    fn launch_buffers(&self, plan: &Plan, buffers: &Buffers, how: Launch) -> Result<(), AttnError> {
        let overlap = how == Launch::Overlapped;
        // A kernel of the call after its first (the attention kernel after
        // its prepass, the merge after `decode`) reads only what the
        // kernels before it wrote, and waits for them itself
        // (`griddepcontrol.wait`): on sm_90a it is always a programmatic
        // dependent launch, so its blocks start while the one before
        // finishes. The first kernel overlaps the caller's work only when
        // asked (`how`; `check_launch` refuses that off sm_90a).
        let chained = self.sm90a;
        let (p, kernel) = (plan.problem(), plan.kernel());
        let entry = plan.entry();
        let func = if entry == kernel.entry {
            self.functions.iter().find(|(k, _)| **k == *kernel).map(|(_, f)| f)
        } else {
            self.passes.iter().find(|(e, _)| *e == entry).map(|(_, f)| f)
        };
        let func = func.ok_or_else(|| AttnError::VariantUnavailable {
            variant: kernel.variant.name(),
            reason: format!("{} needs an sm_90a (Hopper) GPU; this one loaded {}", kernel.entry, self.info.image),
        })?;
        let [q_scale, k_scale, v_scale] = buffers.scales;
        let params = AttnParams {
            q: buffers.q,
            k: buffers.k,
            v: buffers.v,
            o: buffers.o,
            q_scale,
            k_scale,
            v_scale,
            // The scratch is the prepass's tiles, or `decode`'s partial results.
            kv_tiles: if kernel.prepass.is_some() { buffers.scratch } else { 0 },
            batch: p.batch as u32,
            heads_q: p.heads_q as u32,
            heads_kv: p.heads_kv as u32,
            seq_q: p.seq_q as u32,
            seq_kv: p.seq_kv as u32,
            softmax_scale: p.softmax_scale,
            causal: p.causal as u32,
            kv_group: kernels_gpu::schedule::kv_group(p.heads_q as u32, p.heads_kv as u32),
            tile_maps: buffers.tile_maps,
            scale_batch_stride: buffers.scale_batch_stride,
            kv_splits: plan.kv_splits(),
            split_keys: plan.split_keys(),
            seq_q_div: FastDiv::new(p.seq_q as u32),
            heads_kv_div: FastDiv::new(p.heads_kv as u32),
            partials: if kernel.merge.is_some() && plan.kv_splits() > 1 { buffers.scratch } else { 0 },
            lse: buffers.lse,
            seq_used_k: buffers.seq_used_k,
            page_table: buffers.paging.table,
            max_pages: buffers.paging.max_pages,
            page_shift: buffers.paging.page_shift,
            pages: buffers.paging.pages,
            cu_seqlens_q: buffers.packed.cu_seqlens_q,
            cu_seqlens_k: buffers.packed.cu_seqlens_k,
            packed_queries: buffers.packed.total_q,
            packed_keys: buffers.packed.total_k,
            window_left: p.key_window().left,
            window_right: p.key_window().right,
            softcap: p.softcap.unwrap_or(0.0),
            q_strides: buffers.strides.q,
            kv_strides: buffers.strides.kv,
        };
        if let Some(pre) = kernel.prepass {
            let prepass = self.passes.iter().find(|(e, _)| *e == pre.entry).map(|(_, f)| f);
            let (Some(prepass), true) = (prepass, params.kv_tiles != 0) else {
                return Err(AttnError::VariantUnavailable {
                    variant: kernel.variant.name(),
                    reason: format!("its prepass {} is not loaded", pre.entry),
                });
            };
            // A block per scratch tile of each head and batch entry; for a
            // packed batch with prefix sums, per tile of every sequence,
            // one head's (`KvTiles::packed`).
            let grid_dim = match p.packed {
                Some(_) => (kv_tiles_of(plan).tiles_per_head, p.heads_kv as u32, 1),
                None => (padded_keys(p.seq_kv as u32) / TILE_KEYS, p.heads_kv as u32, p.batch as u32),
            };
            let cfg = LaunchConfig { grid_dim, block_dim: (pre.threads, 1, 1), shared_mem_bytes: pre.smem_bytes };
            launch::launch(&self.stream, prepass, cfg, params, overlap)?;
        }
        let tiles = kernel.tiles;
        let grid_dim = match kernel.merge {
            Some(_) => {
                let row_blocks = schedule::blocks(p.fold_rows() as u32, tiles.block_m);
                (row_blocks, plan.kv_splits(), p.folded_heads() as u32)
            }
            None => match p.interleaved_rows() {
                None => schedule::grid(tiles.block_m, p.batch as u32, p.heads_q as u32, p.seq_q as u32, p.causal),
                // Every sequence's query blocks (`BlockJob::new_packed`).
                Some(_) => (p.heads_q as u32, p.packed_query_blocks(tiles.block_m) as u32, 1),
            },
        };
        let cfg = LaunchConfig { grid_dim, block_dim: (kernel.threads(), 1, 1), shared_mem_bytes: kernel.smem_bytes };
        let after_prepass = kernel.prepass.is_some();
        launch::launch(&self.stream, func, cfg, params, if after_prepass { chained } else { overlap })?;
        if let (Some(merge), true) = (kernel.merge, plan.kv_splits() > 1) {
            let entry = merge.entry(kernel.output);
            let Some(merge_fn) = self.passes.iter().find(|(e, _)| *e == entry).map(|(_, f)| f) else {
                return Err(AttnError::VariantUnavailable {
                    variant: kernel.variant.name(),
                    reason: format!("its merge kernel {entry} is not loaded"),
                });
            };
            let cfg = LaunchConfig {
                grid_dim: (p.fold_rows() as u32, p.folded_heads() as u32, 1),
                block_dim: (merge.threads, 1, 1),
                shared_mem_bytes: merge.smem_bytes,
            };
            launch::launch(&self.stream, merge_fn, cfg, params, chained)?;
        }
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
    #[doc(hidden)]
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
    #[doc(hidden)]
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

/// The device addresses a launch reads and writes (checked against its
/// plan by the caller), and how its scales are laid out.
struct Buffers {
    q: u64,
    k: u64,
    v: u64,
    o: u64,
    /// Q's, K's and V's scales.
    scales: [u64; 3],
    /// `AttnParams::scale_batch_stride`.
    scale_batch_stride: u32,
    /// The kernels' scratch (`WorkspaceSize::scratch_bytes`), or 0.
    scratch: u64,
    /// Q's, K's and V's tensor maps, or 0.
    tile_maps: u64,
    /// `decode`'s per-batch key lengths, or 0.
    seq_used_k: u64,
    /// `decode`'s log-sum-exp output, or 0.
    lse: u64,
    /// `decode`'s page table, or none.
    paging: Paging,
    /// A packed batch's prefix sums and rows, or none.
    packed: Packing,
    /// Where rows interleave heads, the rows' strides.
    strides: Strides,
}

/// Q's and K's and V's row strides as the kernels take them
/// (`AttnParams::q_strides`, `AttnParams::kv_strides`).
#[derive(Clone, Copy)]
struct Strides {
    q: params::RowStrides,
    kv: params::RowStrides,
}

impl Strides {
    /// Dense rows of `p`'s heads (which `[B, H, S, D]` kernels ignore).
    fn dense(p: &Problem) -> Strides {
        let d = p.head_dim as u32;
        Strides {
            q: params::RowStrides::dense(p.heads_q as u32, d),
            kv: params::RowStrides::dense(p.heads_kv as u32, d),
        }
    }
}

/// The row strides of a run's views: dense, or the views' own where the
/// plan's kernel reads them (rows that interleave heads: `[B, S, H, D]`
/// and packed plans; `decode`'s K and V only, its Q read dense). K and V
/// must share theirs.
fn row_strides(plan: &Plan, q: &Fp8View, kv: &KvCache) -> Result<Strides, AttnError> {
    let p = plan.problem();
    let dense = Strides::dense(p);
    let (k, v) = match kv {
        KvCache::Contiguous(k, v) | KvCache::Packed(k, v, _) => (k.row_strides(), v.row_strides()),
        KvCache::Paged(_) => (None, None),
    };
    let refuse = |tensor: &str, strides: RowStrides, reason: &str| {
        Err(AttnError::InvalidStrides {
            tensor: tensor.into(),
            row: strides.row,
            head: strides.head,
            reason: reason.into(),
        })
    };
    if k != v {
        let (tensor, strides) = match k {
            Some(strides) => ("k", strides),
            None => ("v", v.unwrap_or(RowStrides::dense(p.heads_kv, p.head_dim))),
        };
        return refuse(tensor, strides, "K and V must share their row strides");
    }
    let interleaved = p.interleaved_rows().is_some();
    for (tensor, strides) in [("q", q.row_strides()), ("k", k)] {
        let Some(strides) = strides else { continue };
        if !interleaved {
            return refuse(tensor, strides, "strided views run on [B, S, H, D] and packed plans only");
        }
        if tensor == "q" && plan.variant() == Variant::Decode {
            return refuse(tensor, strides, "decode reads Q dense (its K and V may be strided)");
        }
    }
    Ok(Strides {
        q: q.row_strides().map_or(dense.q, RowStrides::to_params),
        kv: k.map_or(dense.kv, RowStrides::to_params),
    })
}

/// A packed batch's prefix sums and rows as the kernels take them
/// (`AttnParams::cu_seqlens_q` and the three after it).
#[derive(Clone, Copy)]
struct Packing {
    cu_seqlens_q: u64,
    cu_seqlens_k: u64,
    total_q: u32,
    total_k: u32,
}

impl Packing {
    /// Dense tensors.
    const NONE: Packing = Packing { cu_seqlens_q: 0, cu_seqlens_k: 0, total_q: 0, total_k: 0 };
}

/// Where a run's K and V come from.
enum KvCache<'r, 'a> {
    /// `[batch, heads_kv, seq_kv, head_dim]` each.
    Contiguous(&'r Fp8View<'a>, &'r Fp8View<'a>),
    /// Pools of pages and a page table.
    Paged(&'r PagedKv<'a>),
    /// A packed batch's `[total_k, heads_kv, head_dim]` each, and its
    /// prefix sums.
    Packed(&'r Fp8View<'a>, &'r Fp8View<'a>, &'r PackedSeqs<'a>),
}

/// A paged cache's table and geometry as the kernels take them
/// (`AttnParams::page_table` and the three after it).
#[derive(Clone, Copy)]
struct Paging {
    table: u64,
    max_pages: u32,
    page_shift: u32,
    pages: u32,
}

impl Paging {
    /// Contiguous K and V.
    const NONE: Paging = Paging { table: 0, max_pages: 0, page_shift: 0, pages: 0 };
}

/// `func` allowed `smem_bytes` of dynamic shared memory (past the default
/// limit, an opt-in).
fn with_smem(func: CudaFunction, smem_bytes: u32) -> Result<CudaFunction, AttnError> {
    if smem_bytes > DEFAULT_SMEM_LIMIT {
        func.set_attribute(CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, smem_bytes as i32)?;
    }
    Ok(func)
}

/// Refuses a view `name` in `layout` for a plan made for `planned`.
fn check_layout(name: &str, layout: Layout, planned: Layout) -> Result<(), AttnError> {
    if layout != planned {
        return Err(AttnError::NotPlanned(format!(
            "{name} is laid out {}, the plan's tensors {} (Options::layout)",
            layout.name(),
            planned.name()
        )));
    }
    Ok(())
}

/// Refuses an output of `shape` and `dtype` for problem `p`.
fn check_output(shape: [usize; 4], dtype: OutputDtype, p: &Problem) -> Result<(), AttnError> {
    let expected = p.packed_shapes().map_or(p.q_shape(), |(q, _)| q);
    if shape != expected || dtype != p.output {
        return Err(AttnError::ShapeMismatch(format!(
            "output buffer is {:?} {} but the problem needs {:?} {}",
            shape,
            dtype.name(),
            expected,
            p.output.name()
        )));
    }
    Ok(())
}

/// Q's, K's and V's tensor maps (`TileMaps`, as 48 words) for `key`.
fn encode_tile_maps(key: &TileMapKey) -> Result<[u64; MAP_WORDS], AttnError> {
    let [q, k, v] = key.addresses;
    let map = |address, extent, strides, box_rows| {
        launch::encode_tile_map(address, key.head_dim, extent, strides, box_rows, key.pair_rows)
    };
    let d = key.head_dim as u64;
    let q_strides = [d, key.q_rows as u64 * d];
    let kv_extent = (key.kv_rows, key.kv_heads);
    let maps = [
        map(q, (key.q_rows, key.q_heads), q_strides, key.q_box_rows)?,
        map(k, kv_extent, key.kv_strides, key.kv_box_rows)?,
        map(v, kv_extent, key.kv_strides, key.kv_box_rows)?,
    ];
    let mut words = [0; MAP_WORDS];
    words.copy_from_slice(&maps.concat());
    Ok(words)
}

/// The refusal of a paged KV cache on `variant`: only `decode` reads pages.
fn pages_need_decode(variant: Variant) -> AttnError {
    AttnError::VariantUnavailable {
        variant: variant.name(),
        reason: "a paged KV cache is read by the `decode` variant only".into(),
    }
}
