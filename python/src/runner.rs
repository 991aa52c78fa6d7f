//! The GPU side of a call. Per device: the kernels, loaded once
//! (`sdpa::Attention::on_stream`); per (device, stream): those kernels on
//! the caller's stream (`Attention::for_stream`), the plans made so far (one
//! per shape, causality, scale, window, score cap and output type) and one
//! workspace, grown as plans need; so a call in the steady state plans,
//! allocates and copies nothing but its tensor maps when the inputs moved.
//!
//! CUDA graphs: a run captured into a graph uses its workspace at every
//! replay, so a captured workspace is kept (for the graph) and never run
//! again outside a capture: the next ordinary run on that stream takes a
//! new one. A capture records launches only, so it cannot load the kernels
//! or allocate a workspace: the first call on a device, or a capture whose
//! stream has no workspace large enough, is refused before anything is
//! recorded, unless another stream of the device has one, which the
//! capture then takes over (`torch.cuda.graph` synchronizes the device
//! before capturing, so no earlier work still uses it). So one run of the
//! same shapes anywhere on the device before the capture is enough.
//!
//! A packed variable-length call (`run_packed`) shares all of this: its
//! plans are keyed by its row totals, batch and longest lengths.
//!
//! `[B, S, H, D]` tensors: the library is asked to read them in place with
//! the variant it recommends for the problem (`Options::layout`); where
//! that variant cannot (`AttnError::LayoutUnavailable`, remembered per
//! plan key), the call launches nothing and says so, and the caller copies
//! into `[B, H, S, D]`.
//!
//! This module and `dlpack` hold the binding's `unsafe`: raw
//! device addresses and a raw stream handle, from PyTorch, turned into the
//! `sdpa` crate's views.

use crate::args::{Call, Operand};
use crate::kvcache_args::{Cache, KvCacheCall};
use crate::packed_args::PackedCall;
use crate::scores::Scores;
use sdpa::cudarc::driver::sys::{self, CUstream, CUstreamCaptureStatus};
use sdpa::cudarc::driver::{CudaContext, CudaStream};
use sdpa::device::{
    DeviceScales, Fp8View, OutputViewMut, PackedSeqs, RowStrides, RunExtras, ScaleLayout, Workspace, WorkspaceSize,
};
use sdpa::raw;
use sdpa::{Attention, AttnError, ImageChoice, Layout, Options, OutputDtype, PagedKv, Plan, Problem, Variant};
use std::collections::{HashMap, HashSet};
use std::fmt;
use std::sync::{Arc, LazyLock, Mutex};

/// Why a run failed: the library refused or failed, or a CUDA-graph capture
/// reached a call that would have to load kernels or allocate.
#[derive(Debug)]
pub enum RunError {
    /// The library's error.
    Attn(AttnError),
    /// A call during capture that needs what a capture cannot record.
    Capture(&'static str),
}

impl From<AttnError> for RunError {
    fn from(e: AttnError) -> Self {
        RunError::Attn(e)
    }
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunError::Attn(e) => e.fmt(f),
            RunError::Capture(why) => write!(f, "{why}: run the call once on the capturing stream before capturing"),
        }
    }
}

/// A capture reached the first call on its device (which loads the kernels).
const FIRST_CALL_IN_CAPTURE: &str = "the first call on a CUDA device loads the kernels, which a graph capture cannot";
/// A capture reached a call for which no stream of the device has a large
/// enough workspace.
const WORKSPACE_IN_CAPTURE: &str = "this call needs a larger workspace, which a graph capture cannot allocate";

/// The shapes a plan is made for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Shapes {
    /// Q `[B, Hq, Sq, D]`, K and V `[B, Hkv, Skv, D]`.
    Dense { q: [usize; 4], kv: [usize; 4] },
    /// A packed batch: Q `[total_q, Hq, D]`, K and V `[total_k, Hkv, D]`,
    /// `batch` sequences of at most `max_seqlen` (queries, keys) rows.
    Packed { q: [usize; 3], kv: [usize; 3], batch: usize, max_seqlen: [usize; 2] },
    /// A KV cache, planned on `decode`: Q `[B, Hq, Sq, D]`, the cache as
    /// `[B, Hkv, Skv, D]` (a paged cache's `max_pages * page_size` keys).
    Decode { q: [usize; 4], kv: [usize; 4] },
}

/// What selects a plan on one device.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct PlanKey {
    shapes: Shapes,
    /// How the dense tensors lie in memory (`Bhsd` for a packed batch).
    layout: Layout,
    causal: bool,
    /// The softmax scale's bits.
    scale: u32,
    /// The sliding window and the score cap.
    scores: Scores,
    output: OutputDtype,
}

/// The kernels on one caller stream, its plans and its workspace.
struct Runner {
    attention: Attention,
    plans: HashMap<PlanKey, Arc<Plan>>,
    /// `[B, S, H, D]` keys whose recommended variant cannot read that
    /// layout.
    layout_refused: HashSet<PlanKey>,
    workspace: Option<Workspace>,
    /// `workspace` has been captured into a CUDA graph.
    workspace_captured: bool,
    /// Workspaces of earlier captures, alive for as long as their graphs
    /// may replay (the process).
    captured: Vec<Workspace>,
}

/// Every device's context and every (device, stream)'s runner.
#[derive(Default)]
struct Runners {
    contexts: HashMap<usize, Arc<CudaContext>>,
    runners: HashMap<(usize, usize), Runner>,
}

static RUNNERS: LazyLock<Mutex<Runners>> = LazyLock::new(|| Mutex::new(Runners::default()));

/// Runs `call` on the caller's stream `stream` (a `CUstream` of device
/// `call.ordinal`'s primary context, e.g. `torch.cuda.current_stream().
/// cuda_stream`).
///
/// The caller (the Python op) keeps every tensor of `call` alive for the
/// duration of the call, and the caching allocator of PyTorch keeps their
/// memory until the work queued on the stream has finished.
///
/// Returns whether it queued the work: `false`, having queued nothing, for
/// `[B, S, H, D]` tensors ([`Call::layout`]) that the variant the library
/// recommends for the problem cannot read (the caller then copies them
/// into `[B, H, S, D]`); always `true` for `[B, H, S, D]` tensors.
pub fn run(call: &Call, softmax_scale: f32, causal: bool, scores: Scores, stream: usize) -> Result<bool, RunError> {
    let mut runners = RUNNERS.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let shapes = Shapes::Dense { q: call.q.shape, kv: call.k.shape };
    let scale = softmax_scale.to_bits();
    let key = PlanKey { shapes, layout: call.layout, causal, scale, scores, output: call.out_dtype };
    if !runners.runner(call.ordinal, stream)?.reads_layout(key)? {
        return Ok(false);
    }
    let (runner, plan, capturing) = runners.prepare(call.ordinal, stream, key)?;
    runner.run(call, &plan, capturing)?;
    Ok(true)
}

/// Runs the packed batch `call` of sequences of at most `max_seqlen`
/// (queries, keys) rows on the caller's stream `stream`, as [`run`].
pub fn run_packed(
    call: &PackedCall,
    max_seqlen: [usize; 2],
    softmax_scale: f32,
    causal: bool,
    scores: Scores,
    stream: usize,
) -> Result<(), RunError> {
    let mut runners = RUNNERS.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let shapes = Shapes::Packed { q: call.q.shape, kv: call.k.shape, batch: call.batch(), max_seqlen };
    let (layout, scale) = (Layout::Bhsd, softmax_scale.to_bits());
    let key = PlanKey { shapes, layout, causal, scale, scores, output: call.out_dtype };
    let (runner, plan, capturing) = runners.prepare(call.ordinal, stream, key)?;
    runner.run_packed(call, max_seqlen, &plan, capturing)
}

/// Runs the KV-cache call `call` (`decode`, on a `[B, Skv, Hkv, D]` or a
/// paged cache) on the caller's stream `stream`, as [`run`].
pub fn run_kvcache(
    call: &KvCacheCall,
    softmax_scale: f32,
    causal: bool,
    scores: Scores,
    stream: usize,
) -> Result<(), RunError> {
    let mut runners = RUNNERS.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let shapes = Shapes::Decode { q: call.q.shape, kv: call.kv_shape() };
    // A contiguous cache is `[B, S, H, D]`; a paged one's Q and output are
    // read `[B, H, S, D]`.
    let layout = match call.cache {
        Cache::Contiguous { .. } => Layout::Bshd,
        Cache::Paged { .. } => Layout::Bhsd,
    };
    let key = PlanKey { shapes, layout, causal, scale: softmax_scale.to_bits(), scores, output: call.out_dtype };
    let (runner, plan, capturing) = runners.prepare(call.ordinal, stream, key)?;
    runner.run_kvcache(call, &plan, capturing)
}

/// The variant the plan for these shapes and scores runs on device
/// `ordinal` (with the kernels loaded for stream `stream`).
pub fn recommended_variant(
    ordinal: usize,
    stream: usize,
    q: [usize; 4],
    kv: [usize; 4],
    causal: bool,
    scores: Scores,
    output: OutputDtype,
) -> Result<&'static str, RunError> {
    let mut runners = RUNNERS.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let runner = runners.runner(ordinal, stream)?;
    let opts = scores.apply(Options::new().causal(causal).output(output));
    let plan = runner.attention.plan_shapes(q, kv, kv, &opts)?;
    Ok(plan.variant().name())
}

impl Runners {
    /// The runner of (`ordinal`, `stream`), with `key`'s plan and a
    /// workspace that holds it (taken over from another stream of the
    /// device during a capture, where none here is large enough), and
    /// whether the stream is being captured.
    fn prepare(
        &mut self,
        ordinal: usize,
        stream: usize,
        key: PlanKey,
    ) -> Result<(&mut Runner, Arc<Plan>, bool), RunError> {
        let id = (ordinal, stream);
        let runner = self.runner(ordinal, stream)?;
        let plan = runner.plan(key)?;
        let capturing = capturing(runner.attention.stream())?;
        let needed = WorkspaceSize::of(&plan, runner.attention.target());
        if capturing && !runner.workspace.as_ref().is_some_and(|ws| ws.size().holds(needed)) {
            let adopted = self.take_workspace(id, needed).ok_or(RunError::Capture(WORKSPACE_IN_CAPTURE))?;
            let runner = self.runners.get_mut(&id).expect("made above");
            // The one it had stays alive: freeing it would be recorded too.
            runner.captured.extend(runner.workspace.replace(adopted));
            runner.workspace_captured = true;
        }
        let runner = self.runners.get_mut(&id).expect("made above");
        runner.ready_workspace(&plan, capturing, needed)?;
        Ok((runner, plan, capturing))
    }

    /// A workspace that holds `needed`, taken from another stream's runner
    /// of the same device (which makes a new one on its next run).
    fn take_workspace(&mut self, (ordinal, stream): (usize, usize), needed: WorkspaceSize) -> Option<Workspace> {
        self.runners.iter_mut().filter(|(id, _)| id.0 == ordinal && id.1 != stream).find_map(|(_, donor)| {
            if !donor.workspace.as_ref()?.size().holds(needed) {
                return None;
            }
            donor.workspace_captured = false;
            donor.workspace.take()
        })
    }

    /// The runner of (`ordinal`, `stream`), made on first use: the device's
    /// kernels, loaded by its first runner, on this stream.
    fn runner(&mut self, ordinal: usize, stream: usize) -> Result<&mut Runner, RunError> {
        if !self.runners.contains_key(&(ordinal, stream)) {
            let ctx = self.context(ordinal)?;
            // SAFETY: `stream` is a live stream of the device's primary
            // context (PyTorch's current stream on that device, which
            // `CudaContext::new` retains), and PyTorch keeps its streams for
            // the life of the process.
            let borrowed: Arc<CudaStream> = unsafe { raw::borrow_stream(&ctx, stream as CUstream) };
            let loaded = self.runners.iter().find(|(id, _)| id.0 == ordinal).map(|(_, r)| &r.attention);
            let attention = match loaded {
                Some(loaded) => loaded.for_stream(borrowed)?,
                None if capturing(&borrowed)? => return Err(RunError::Capture(FIRST_CALL_IN_CAPTURE)),
                None => Attention::on_stream(borrowed, ImageChoice::from_env())?,
            };
            let runner = Runner {
                attention,
                plans: HashMap::new(),
                layout_refused: HashSet::new(),
                workspace: None,
                workspace_captured: false,
                captured: Vec::new(),
            };
            self.runners.insert((ordinal, stream), runner);
        }
        Ok(self.runners.get_mut(&(ordinal, stream)).expect("inserted above"))
    }

    /// Device `ordinal`'s primary context, retained once.
    fn context(&mut self, ordinal: usize) -> Result<Arc<CudaContext>, AttnError> {
        if let Some(ctx) = self.contexts.get(&ordinal) {
            return Ok(ctx.clone());
        }
        // SAFETY: only tries to load libcuda by its known names (cudarc
        // would panic on its first call without it).
        if !unsafe { sys::is_culib_present() } {
            return Err(AttnError::NoDriver("libcuda could not be loaded".into()));
        }
        let count = CudaContext::device_count().map_err(|e| AttnError::NoDriver(e.to_string()))? as usize;
        if ordinal >= count {
            return Err(AttnError::NoDevice { ordinal, count });
        }
        let ctx = CudaContext::new(ordinal)?;
        // SAFETY: the buffers made through this context object are the
        // workspaces, each made, used and (for graphs) kept on the one
        // stream of its runner, so stream order alone orders their uses;
        // the tensors come from PyTorch as raw addresses, which cudarc does
        // not track.
        unsafe { ctx.disable_event_tracking() };
        self.contexts.insert(ordinal, ctx.clone());
        Ok(ctx)
    }
}

impl Runner {
    /// Whether the library reads `key`'s tensors in their layout: always
    /// for `[B, H, S, D]`; for `[B, S, H, D]`, whether it plans them
    /// ([`Runner::plan`]; a refusal, `AttnError::LayoutUnavailable`, is
    /// remembered).
    fn reads_layout(&mut self, key: PlanKey) -> Result<bool, AttnError> {
        if key.layout == Layout::Bhsd {
            return Ok(true);
        }
        if self.layout_refused.contains(&key) {
            return Ok(false);
        }
        match self.plan(key) {
            Ok(_) => Ok(true),
            Err(AttnError::LayoutUnavailable { .. }) => {
                self.layout_refused.insert(key);
                Ok(false)
            }
            Err(e) => Err(e),
        }
    }

    /// The plan for `key`, made once. `[B, S, H, D]` tensors are planned
    /// with the variant recommended for the problem, which refuses the
    /// layout (`AttnError::LayoutUnavailable`) where it cannot read it.
    fn plan(&mut self, key: PlanKey) -> Result<Arc<Plan>, AttnError> {
        if let Some(plan) = self.plans.get(&key) {
            return Ok(plan.clone());
        }
        let opts = Options::new().causal(key.causal).scale(f32::from_bits(key.scale)).output(key.output);
        let opts = key.scores.apply(opts);
        let plan = match (key.shapes, key.layout) {
            (Shapes::Dense { q, kv }, Layout::Bhsd) => self.attention.plan_shapes(q, kv, kv, &opts)?,
            (Shapes::Dense { q, kv }, Layout::Bshd) => {
                let recommended = self.plan(PlanKey { layout: Layout::Bhsd, ..key })?.variant();
                self.attention.plan_shapes(q, kv, kv, &opts.variant(recommended).layout(Layout::Bshd))?
            }
            (Shapes::Packed { q, kv, batch, max_seqlen }, _) => self.plan_packed(q, kv, batch, max_seqlen, &opts)?,
            (Shapes::Decode { q, kv }, layout) => {
                self.attention.plan_shapes(q, kv, kv, &opts.variant(Variant::Decode).layout(layout))?
            }
        };
        let plan = Arc::new(plan);
        self.plans.insert(key, plan.clone());
        Ok(plan)
    }

    /// A packed batch's plan, as `Attention::plan_packed` makes it from
    /// the prefix sums' batch and the longest lengths (which is all it
    /// reads of them: a plan needs no device memory, and so can be made
    /// during a capture).
    fn plan_packed(
        &self,
        q: [usize; 3],
        kv: [usize; 3],
        batch: usize,
        max_seqlen: [usize; 2],
        opts: &Options,
    ) -> Result<Plan, AttnError> {
        let problem = Problem::packed(q, kv, kv, batch, max_seqlen, opts)?;
        Plan::new(problem, opts.variant, self.attention.target())
    }

    /// Makes sure of a workspace that holds `needed` for `plan` (outside a
    /// capture: a new one after a capture, grown as needed).
    fn ready_workspace(&mut self, plan: &Plan, capturing: bool, needed: WorkspaceSize) -> Result<(), RunError> {
        if !capturing && self.workspace_captured {
            self.captured.extend(self.workspace.take());
            self.workspace_captured = false;
        }
        match (&mut self.workspace, capturing) {
            (None, false) => self.workspace = Some(self.attention.workspace(plan)?),
            (Some(ws), false) => self.attention.grow_workspace(ws, plan)?,
            (Some(ws), true) if ws.size().holds(needed) => {}
            (_, true) => return Err(RunError::Capture(WORKSPACE_IN_CAPTURE)),
        }
        Ok(())
    }

    /// Runs `plan` on `call`'s tensors, in the workspace
    /// [`Runner::ready_workspace`] made sure of.
    fn run(&mut self, call: &Call, plan: &Plan, capturing: bool) -> Result<(), RunError> {
        let ws = self.workspace.as_mut().expect("made by ready_workspace");
        let stream = self.attention.stream();
        // SAFETY: the addresses are the first elements of live PyTorch CUDA
        // tensors on this device of exactly these shapes (checked from
        // their DLPack descriptions; `from_raw` checks them again against
        // the driver's records), which the caller keeps alive during the
        // call and PyTorch's allocator keeps until the stream's work ends;
        // the output (and the log-sum-exp) a fresh tensor nothing else reads
        // or writes. The `bshd` constructors take the shapes in that
        // layout's memory order.
        let (q, k, v, scales, mut out, extras) = unsafe {
            let input = |operand: &Operand<4>, strides: Option<RowStrides>| {
                let (address, memory) = (operand.address, call.layout.memory_order(operand.shape));
                match (call.layout, strides) {
                    (Layout::Bhsd, _) => Fp8View::from_raw(stream, address, operand.shape),
                    (Layout::Bshd, None) => Fp8View::from_raw_bshd(stream, address, memory),
                    (Layout::Bshd, Some(strides)) => Fp8View::from_raw_bshd_strided(stream, address, memory, strides),
                }
            };
            let [q_strides, k_strides, v_strides] = call.row_strides;
            let (out, dtype) = (call.out, call.out_dtype);
            (
                input(&call.q, q_strides)?,
                input(&call.k, k_strides)?,
                input(&call.v, v_strides)?,
                descale_views(stream, &call.descales)?,
                match call.layout {
                    Layout::Bhsd => OutputViewMut::from_raw(stream, out.address, dtype, out.shape)?,
                    Layout::Bshd => {
                        OutputViewMut::from_raw_bshd(stream, out.address, dtype, call.layout.memory_order(out.shape))?
                    }
                },
                match call.lse {
                    Some(lse) => RunExtras::new().lse_from_raw(stream, lse.address, lse.shape.iter().product())?,
                    None => RunExtras::new(),
                },
            )
        };
        self.attention.run_views_with(plan, &q, &k, &v, &scales, &mut out, ws, extras)?;
        if capturing && ws.size().bytes() > 0 {
            self.workspace_captured = true;
        }
        Ok(())
    }

    /// Runs the KV-cache `plan` on `call`'s tensors, as [`Runner::run`].
    fn run_kvcache(&mut self, call: &KvCacheCall, plan: &Plan, capturing: bool) -> Result<(), RunError> {
        let ws = self.workspace.as_mut().expect("made by ready_workspace");
        let stream = self.attention.stream();
        let [b, hq, sq, d] = call.q.shape;
        // SAFETY: as in `Runner::run`: live PyTorch CUDA tensors of these
        // shapes on this device (a strided cache over the elements its
        // strides span, a paged one's pools and table), kept alive during
        // the call; the output and the log-sum-exp fresh tensors nothing
        // else touches. With a contiguous cache (one query row) the plan
        // reads `[B, S, H, D]`, whose Q, output and log-sum-exp at `Sq = 1`
        // are the bytes of their `[B, H, S, D]` forms.
        let (q, scales, mut out, extras) = unsafe {
            let bshd = matches!(call.cache, Cache::Contiguous { .. });
            let (q, out) = (call.q.address, call.out.address);
            (
                if bshd {
                    Fp8View::from_raw_bshd(stream, q, [b, sq, hq, d])?
                } else {
                    Fp8View::from_raw(stream, q, call.q.shape)?
                },
                descale_views(stream, &call.descales)?,
                if bshd {
                    OutputViewMut::from_raw_bshd(stream, out, call.out_dtype, [b, sq, hq, d])?
                } else {
                    OutputViewMut::from_raw(stream, out, call.out_dtype, call.out.shape)?
                },
                {
                    let extras = match call.cache_seqlens {
                        Some(lens) => RunExtras::new().seq_used_k_from_raw(stream, lens.address, b)?,
                        None => RunExtras::new(),
                    };
                    match call.lse {
                        Some(lse) => extras.lse_from_raw(stream, lse.address, lse.shape.iter().product())?,
                        None => extras,
                    }
                },
            )
        };
        let (k, v) = (call.k, call.v);
        match call.cache {
            Cache::Contiguous { strides } => {
                // SAFETY: as above.
                let (k, v) = unsafe {
                    match strides {
                        None => (
                            Fp8View::from_raw_bshd(stream, k.address, k.shape)?,
                            Fp8View::from_raw_bshd(stream, v.address, v.shape)?,
                        ),
                        Some(strides) => (
                            Fp8View::from_raw_bshd_strided(stream, k.address, k.shape, strides)?,
                            Fp8View::from_raw_bshd_strided(stream, v.address, v.shape, strides)?,
                        ),
                    }
                };
                self.attention.run_views_with(plan, &q, &k, &v, &scales, &mut out, ws, extras)?;
            }
            Cache::Paged { page_table } => {
                // SAFETY: as above.
                let kv = unsafe {
                    let (k, v) = (
                        Fp8View::from_raw(stream, k.address, k.shape)?,
                        Fp8View::from_raw(stream, v.address, v.shape)?,
                    );
                    PagedKv::from_raw(stream, k, v, page_table.address, page_table.shape)?
                };
                self.attention.run_paged(plan, &q, &kv, &scales, &mut out, ws, extras)?;
            }
        }
        if capturing && ws.size().bytes() > 0 {
            self.workspace_captured = true;
        }
        Ok(())
    }

    /// Runs the packed `plan` on `call`'s tensors, sequences of at most
    /// `max_q` queries and `max_k` keys, as [`Runner::run`].
    fn run_packed(
        &mut self,
        call: &PackedCall,
        [max_q, max_k]: [usize; 2],
        plan: &Plan,
        capturing: bool,
    ) -> Result<(), RunError> {
        let ws = self.workspace.as_mut().expect("made by ready_workspace");
        let stream = self.attention.stream();
        let packed = |[rows, heads, head_dim]: [usize; 3]| [1, rows, heads, head_dim];
        let input = |operand: &Operand<3>, strides: Option<RowStrides>| match strides {
            // SAFETY: as below.
            None => unsafe { Fp8View::from_raw(stream, operand.address, packed(operand.shape)) },
            // SAFETY: as below, over the elements the strides span.
            Some(strides) => unsafe {
                Fp8View::from_raw_packed_strided(stream, operand.address, operand.shape, strides)
            },
        };
        let [q_strides, k_strides, v_strides] = call.row_strides;
        let (cu_q, cu_k) = (call.cu_seqlens_q, call.cu_seqlens_k);
        // SAFETY: as in `Runner::run`; Q, K, V and O are the packed views
        // `Fp8View::packed` and `OutputViewMut::packed` make (`[1, rows,
        // heads, head_dim]`), the prefix sums `batch + 1` int32 each and
        // the log-sum-exp a fresh `[total_q, Hq]` f32 tensor nothing else
        // reads or writes.
        let (q, k, v, scales, mut out, seqs, extras) = unsafe {
            (
                input(&call.q, q_strides)?,
                input(&call.k, k_strides)?,
                input(&call.v, v_strides)?,
                descale_views(stream, &call.descales)?,
                OutputViewMut::from_raw(stream, call.out.address, call.out_dtype, packed(call.out.shape))?,
                PackedSeqs::from_raw(
                    stream,
                    [cu_q.address, cu_k.address],
                    [cu_q.shape[0], cu_k.shape[0]],
                    [max_q, max_k],
                )?,
                match call.lse {
                    Some(lse) => RunExtras::new().lse_from_raw(stream, lse.address, lse.shape[0] * lse.shape[1])?,
                    None => RunExtras::new(),
                },
            )
        };
        self.attention.run_packed(plan, &q, &k, &v, &seqs, &scales, &mut out, ws, extras)?;
        if capturing && ws.size().bytes() > 0 {
            self.workspace_captured = true;
        }
        Ok(())
    }
}

/// Q's, K's and V's `(B, Hkv)` descales at their raw addresses.
///
/// # Safety
/// As `DeviceScales::from_raw`: each address the first of its shape's f32
/// elements, live for the call.
unsafe fn descale_views<'a>(stream: &CudaStream, descales: &[Operand<2>; 3]) -> Result<DeviceScales<'a>, AttnError> {
    let [qs, ks, vs] = descales;
    let len = |s: &Operand<2>| s.shape[0] * s.shape[1];
    // SAFETY: the caller's promise.
    unsafe {
        DeviceScales::from_raw(
            stream,
            [qs.address, ks.address, vs.address],
            [len(qs), len(ks), len(vs)],
            ScaleLayout::PerBatchHead,
        )
    }
}

/// Whether `stream` is being captured into a CUDA graph.
fn capturing(stream: &CudaStream) -> Result<bool, AttnError> {
    Ok(stream.capture_status()? != CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE)
}
