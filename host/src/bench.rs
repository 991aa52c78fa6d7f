//! Timing: CUDA events around back-to-back launches or graph replays,
//! repeated, summarised; the device-to-device copy rate timed the same way;
//! `decode` on a contiguous or paged cache with per-sequence lengths,
//! through the device API ([`bench_decode_cache`]); packed batches of
//! sequences of their own lengths ([`bench_packed`]).

use crate::attention::{Attention, DeviceOutput, DeviceProblem, Launch, POISON};
use crate::device::{DeviceScales, Fp8View, OutputViewMut, PagedKv, RunExtras, ScaleLayout, Workspace};
use crate::error::AttnError;
use crate::metrics::{ErrorStats, Tolerance, compare};
use crate::options::{Layout, Options};
use crate::plan::Plan;
use crate::quant::{SplitMix64, from_codes, random_problem};
use crate::reference::{ScoreRule, attention_rows_f64, attention_rows_scored_f64, sample_rows};
use crate::tensor::Fp8Tensor;
use cudarc::driver::sys::{CUevent_flags, CUgraphInstantiate_flags, CUstreamCaptureMode};
use cudarc::driver::{CudaSlice, CudaStream};
use kernels_gpu::variant::{OutputDtype, Variant};
use kernels_gpu::window::KeyWindow;
use serde::Serialize;

mod layout;
mod packed;

pub use layout::bench_shape_bshd;
pub use packed::{PackedInputs, bench_packed, packed_label};

/// How to time one (variant, shape).
#[derive(Clone, Copy, Debug)]
pub struct BenchConfig {
    /// Launches between the two events of one sample.
    pub launches_per_sample: usize,
    /// Samples (each one timed pair of events).
    pub samples: usize,
    /// Untimed launches first (module load, clocks, caches).
    pub warmup_launches: usize,
    /// The output type the timed kernels write (their entries differ).
    pub output: OutputDtype,
    /// The keys each row sees around its position (`Options::window`):
    /// every key by default. [`bench_shape`] only: the other benches
    /// refuse a window.
    pub window: KeyWindow,
    /// The score cap (`Options::softcap`), if any. [`bench_shape`] only,
    /// as `window`.
    pub softcap: Option<f32>,
}

impl Default for BenchConfig {
    fn default() -> Self {
        BenchConfig {
            launches_per_sample: 100,
            samples: 20,
            warmup_launches: 50,
            output: OutputDtype::F16,
            window: KeyWindow::FULL,
            softcap: None,
        }
    }
}

/// Target device time of one sample when choosing launches per sample.
const SAMPLE_TARGET_MS: f64 = 2.0;

impl BenchConfig {
    /// Launches per sample for work whose one call took `one_call_ms`:
    /// about [`SAMPLE_TARGET_MS`] of work, 1 to `launches_per_sample`.
    /// This configuration with `launches` calls per sample (from
    /// [`BenchConfig::launches_for`]) and at most five samples' worth of
    /// warm-up.
    fn with_launches(&self, launches: usize) -> BenchConfig {
        BenchConfig { launches_per_sample: launches, warmup_launches: self.warmup_launches.min(launches * 5), ..*self }
    }

    /// The f64 reference's rule for `causal` masking and this window and
    /// cap.
    fn score_rule(&self, causal: bool) -> ScoreRule {
        let side = |n: u32| (n < KeyWindow::UNBOUNDED).then_some(n as usize);
        ScoreRule {
            causal,
            left: side(self.window.left),
            right: side(self.window.right),
            softcap: self.softcap.map(f64::from),
        }
    }

    /// The options of a dense row: `causal` masking, this output type,
    /// window and cap (the variant and layout the defaults).
    fn options(&self, causal: bool) -> Options {
        Options { causal, output: self.output, window: self.window, softcap: self.softcap, ..Options::default() }
    }

    /// Refuses a window or a cap for `what`, a bench that does not time
    /// them ([`AttnError::UnsupportedScores`]).
    fn plain_scores(&self, what: &'static str) -> Result<(), AttnError> {
        let feature = match (self.window.is_full(), self.softcap) {
            (true, None) => return Ok(()),
            (_, Some(_)) => "a softcap",
            (false, None) => "a sliding window",
        };
        Err(AttnError::UnsupportedScores { what, feature, supported: "sdpa::bench::bench_shape" })
    }

    fn launches_for(&self, one_call_ms: f32) -> usize {
        ((SAMPLE_TARGET_MS / f64::from(one_call_ms).max(1e-6)).round() as usize)
            .clamp(1, self.launches_per_sample.max(1))
    }
}

/// Time per call, in microseconds, over the samples.
#[derive(Clone, Debug, PartialEq)]
pub struct Timing {
    /// Median.
    pub median_us: f64,
    /// 10th percentile.
    pub p10_us: f64,
    /// 90th percentile.
    pub p90_us: f64,
    /// Standard deviation.
    pub std_us: f64,
    /// Every sample (time per call).
    pub samples_us: Vec<f64>,
}

impl Timing {
    /// Summarises per-call times (at least one).
    pub fn from_samples(mut samples_us: Vec<f64>) -> Timing {
        samples_us.sort_by(f64::total_cmp);
        let n = samples_us.len();
        let at = |q: f64| samples_us[((n - 1) as f64 * q).round() as usize];
        let mean = samples_us.iter().sum::<f64>() / n as f64;
        let var = samples_us.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n as f64;
        Timing { median_us: at(0.5), p10_us: at(0.1), p90_us: at(0.9), std_us: var.sqrt(), samples_us }
    }
}

/// How the launches of one sample are issued.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LaunchMode {
    /// Back-to-back `cuLaunchKernel` calls (host launch cost included when
    /// the kernel is shorter than it).
    Direct,
    /// One replay of a CUDA graph holding the launches (how the peers are
    /// timed too; the kernel's own time for short kernels).
    Graph,
    /// As `Graph`, with every launch a programmatic dependent launch
    /// ([`Attention::run_overlapped`], sm_90a): each kernel's blocks start
    /// while the one before finishes. Not how the peers are timed.
    GraphOverlap,
}

impl LaunchMode {
    /// Every mode, in the order `name` lists them.
    pub const ALL: [LaunchMode; 3] = [LaunchMode::Direct, LaunchMode::Graph, LaunchMode::GraphOverlap];

    /// "direct", "graph" or "graph-overlap".
    pub fn name(self) -> &'static str {
        match self {
            LaunchMode::Direct => "direct",
            LaunchMode::Graph => "graph",
            LaunchMode::GraphOverlap => "graph-overlap",
        }
    }
}

/// Times the problem's kernel: warm-up, then `samples` x (`launches_per_sample`
/// launches between two events), giving time per call.
pub fn time_kernel(
    attn: &Attention,
    dev: &DeviceProblem,
    out: &mut DeviceOutput,
    cfg: &BenchConfig,
    mode: LaunchMode,
) -> Result<Timing, AttnError> {
    attn.time_runs(dev, out, cfg.warmup_launches.max(1))?;
    let per_sample = cfg.launches_per_sample.max(1);
    let graph = match mode {
        LaunchMode::Graph => Some(attn.capture(dev, out, per_sample, Launch::Ordered)?),
        LaunchMode::GraphOverlap => Some(attn.capture(dev, out, per_sample, Launch::Overlapped)?),
        LaunchMode::Direct => None,
    };
    let mut samples = Vec::with_capacity(cfg.samples.max(1));
    for _ in 0..cfg.samples.max(1) {
        let ms = match &graph {
            Some(g) => attn.time_replay(g)?,
            None => attn.time_runs(dev, out, per_sample)?,
        };
        samples.push(ms as f64 * 1e3 / per_sample as f64);
    }
    Ok(Timing::from_samples(samples))
}

/// Bytes the device-to-device copy reads (and writes): 1 GiB.
pub const COPY_BYTES: usize = 1 << 30;

/// The device-to-device copy's rate, timed as the kernels are: the
/// memory bandwidth a decode kernel's K+V read rate is measured against.
#[derive(Clone, Debug, Serialize)]
pub struct CopyRate {
    /// Bytes one copy reads (it writes as many).
    pub bytes: usize,
    /// "graph" or "direct".
    pub mode: &'static str,
    /// Copies per timed sample.
    pub launches_per_sample: usize,
    /// Median time per copy (us).
    pub median_us: f64,
    /// 10th percentile (us).
    pub p10_us: f64,
    /// 90th percentile (us).
    pub p90_us: f64,
    /// Standard deviation (us).
    pub std_us: f64,
    /// Bytes read plus bytes written over the median, in TB/s.
    pub tb_s: f64,
}

/// Times a [`COPY_BYTES`] device-to-device copy on the library's stream,
/// as [`bench_shape`] times a kernel: one copy alone picks the copies per
/// sample, then a warm-up and `cfg.samples` samples, each one graph replay
/// (`mode` `Graph` or `GraphOverlap`) or that many copies issued back to
/// back (`Direct`) between two events.
pub fn time_copy(attn: &Attention, cfg: &BenchConfig, mode: LaunchMode) -> Result<CopyRate, AttnError> {
    let stream = attn.stream();
    let src = stream.alloc_zeros::<u8>(COPY_BYTES)?;
    let mut dst = stream.alloc_zeros::<u8>(COPY_BYTES)?;
    let mut copy = || -> Result<(), AttnError> { Ok(stream.memcpy_dtod(&src, &mut dst)?) };
    copy()?;
    let launches = cfg.launches_for(time_on_stream(stream, &mut copy)?);
    let warmup = cfg.warmup_launches.min(launches * 5);
    let t = time_calls(stream, cfg.samples, (warmup, launches), mode, copy)?;
    Ok(CopyRate {
        bytes: COPY_BYTES,
        mode: if mode == LaunchMode::Direct { LaunchMode::Direct.name() } else { LaunchMode::Graph.name() },
        launches_per_sample: launches,
        median_us: t.median_us,
        p10_us: t.p10_us,
        p90_us: t.p90_us,
        std_us: t.std_us,
        tb_s: 2.0 * COPY_BYTES as f64 / (t.median_us * 1e-6) / 1e12,
    })
}

/// Device time in milliseconds of the work `work` queues on `stream`,
/// between two events (the stream drained first).
fn time_on_stream(stream: &CudaStream, work: impl FnOnce() -> Result<(), AttnError>) -> Result<f32, AttnError> {
    let ctx = stream.context();
    let start = ctx.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))?;
    let stop = ctx.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))?;
    stream.synchronize()?;
    start.record(stream)?;
    work()?;
    stop.record(stream)?;
    stop.synchronize()?;
    Ok(start.elapsed_ms(&stop)?)
}

/// A benchmark shape: `B,Hq[:Hkv],Sq[:Skv],D[,causal]`. A field without
/// `:` gives both sides (`B,H,S,D` is Hq = Hkv = H, Sq = Skv = S); Hq must
/// be a multiple of Hkv (grouped-query attention), every size above zero.
///
/// In JSON (`sdpa bench --json`) the query side keeps the names the
/// record files have always used: `heads` is Hq and `seq` is Sq, beside
/// `heads_kv` and `seq_kv`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct BenchShape {
    /// Batch.
    pub batch: usize,
    /// Query heads (Hq).
    #[serde(rename = "heads")]
    pub heads_q: usize,
    /// Key/value heads (Hkv, a divisor of Hq).
    pub heads_kv: usize,
    /// Query tokens per sequence (Sq).
    #[serde(rename = "seq")]
    pub seq_q: usize,
    /// Keys per sequence (Skv).
    pub seq_kv: usize,
    /// Head dimension.
    pub head_dim: usize,
    /// Causal masking, aligned bottom-right (query i sees key j iff
    /// j <= i + Skv - Sq), as the library masks.
    pub causal: bool,
}

pub use kernels_gpu::record::DECODE_MAX_QUERIES;

impl BenchShape {
    /// Parses `B,Hq[:Hkv],Sq[:Skv],D[,causal]` (`64,32:8,1:8192,128`;
    /// `2,8,256,64,causal`).
    pub fn parse(text: &str) -> Result<BenchShape, String> {
        let bad = |why: &str| format!("shape {text:?} is not B,Hq[:Hkv],Sq[:Skv],D[,causal]: {why}");
        let parts: Vec<&str> = text.split(',').map(str::trim).collect();
        if !(4..=5).contains(&parts.len()) {
            return Err(bad("it needs 4 fields, or 5 with `causal` last"));
        }
        if parts.len() == 5 && parts[4] != "causal" {
            return Err(bad("the fifth field can only be `causal`"));
        }
        let size = |p: &str| match p.parse::<usize>() {
            Ok(0) => Err(bad("every size must be above zero")),
            Ok(n) => Ok(n),
            Err(_) => Err(bad(&format!("{p:?} is not a size"))),
        };
        let pair = |p: &str| match p.split_once(':') {
            Some((a, b)) => Ok((size(a.trim())?, size(b.trim())?)),
            None => size(p).map(|n| (n, n)),
        };
        let batch = size(parts[0])?;
        let (heads_q, heads_kv) = pair(parts[1])?;
        let (seq_q, seq_kv) = pair(parts[2])?;
        let head_dim = size(parts[3])?;
        if heads_q % heads_kv != 0 {
            return Err(bad(&format!("{heads_q} query heads are not a multiple of {heads_kv} key/value heads")));
        }
        Ok(BenchShape { batch, heads_q, heads_kv, seq_q, seq_kv, head_dim, causal: parts.len() == 5 })
    }

    /// Q's and O's dimensions, `[B, Hq, Sq, D]`.
    pub fn q_dims(&self) -> [usize; 4] {
        [self.batch, self.heads_q, self.seq_q, self.head_dim]
    }

    /// K's and V's dimensions, `[B, Hkv, Skv, D]`.
    pub fn kv_dims(&self) -> [usize; 4] {
        [self.batch, self.heads_kv, self.seq_kv, self.head_dim]
    }

    /// Whether this is a decode shape (Sq <= [`DECODE_MAX_QUERIES`]).
    pub fn is_decode(&self) -> bool {
        self.seq_q <= DECODE_MAX_QUERIES as usize
    }

    /// The bytes of K and V (E4M3, one byte each), each read once.
    pub fn kv_bytes(&self) -> f64 {
        2.0 * self.kv_dims().iter().product::<usize>() as f64
    }

    /// The shape as it parses, each pair in its short form where its two
    /// sides are equal (`2,8,256,64,causal`, `64,32:8,1:8192,128`).
    pub fn label(&self) -> String {
        kernels_gpu::record::ShapeLabel {
            batch: self.batch as u64,
            heads: (self.heads_q as u64, self.heads_kv as u64),
            seq: (self.seq_q as u64, self.seq_kv as u64),
            head_dim: self.head_dim as u64,
            causal: self.causal,
        }
        .to_string()
    }
}

/// The shapes `sdpa bench` and `sdpa plan` take when none are given: the
/// record set ([`kernels_gpu::record::SHAPES`]).
pub use kernels_gpu::record::SHAPES as DEFAULT_SHAPES;

/// One timed (variant, shape, launch mode), with its correctness check.
#[derive(Clone, Debug, Serialize)]
pub struct BenchRow {
    /// Variant name.
    pub variant: &'static str,
    /// PTX entry that ran.
    pub entry: &'static str,
    /// The shape.
    pub shape: BenchShape,
    /// The K/V cache the row read: contiguous and whole for every row
    /// but [`bench_decode_cache`]'s.
    pub cache: CacheLayout,
    /// A packed batch's sequence lengths ([`bench_packed`]; then `shape`
    /// has the sequences as its batch and the longest as its lengths);
    /// `None` for every other row.
    pub packed: Option<Vec<usize>>,
    /// How Q, K, V and O lay in memory: `[B, H, S, D]`, or `[B, S, H, D]`
    /// ([`bench_shape_bshd`]); by its name in JSON.
    #[serde(serialize_with = "layout_name")]
    pub layout: Layout,
    /// "direct", "graph" or "graph-overlap".
    pub mode: &'static str,
    /// Launches per timed sample.
    pub launches_per_sample: usize,
    /// Median time per call (us).
    pub median_us: f64,
    /// 10th percentile (us).
    pub p10_us: f64,
    /// 90th percentile (us).
    pub p90_us: f64,
    /// Standard deviation (us).
    pub std_us: f64,
    /// `4 B Hq Sq Skv D / median` in TFLOP/s (every query-key pair
    /// counted, the causally masked ones too: causal is not halved; with
    /// `seq_used_k`, the sum of the lengths instead of `B Skv`).
    pub tflops: f64,
    /// Minimum bytes moved (Q, K, V once, O once) over the median, in GB/s
    /// (K and V: the keys the sequences hold).
    pub gbytes_per_s: f64,
    /// K and V bytes (`2 B Hkv Skv D`, E4M3; with `seq_used_k`, `2 Hkv D`
    /// times the sum of the lengths) over the median, in TB/s: what bounds
    /// a decode shape's time (compare with [`CopyRate::tb_s`]).
    pub kv_tb_s: f64,
    /// Relative L2 error of sampled rows against the f64 reference.
    pub rel_l2: f64,
    /// Largest absolute error of sampled rows.
    pub max_abs: f64,
    /// NaNs in the sampled rows.
    pub nan_count: usize,
    /// Whether the sampled rows pass the correctness gate's tolerance.
    pub correct: bool,
}

/// A row's [`Layout`] as its name ("bhsd", "bshd").
fn layout_name<S: serde::Serializer>(layout: &Layout, to: S) -> Result<S::Ok, S::Error> {
    to.serialize_str(layout.name())
}

/// Rows of the reference checked before a shape is timed.
const CHECK_ROWS: usize = 64;

/// The inputs of one shape, made once and timed on every variant (a
/// decode shape's cache is gigabytes of values to draw and quantize).
pub struct BenchInputs {
    /// The shape.
    pub shape: BenchShape,
    q: Fp8Tensor,
    k: Fp8Tensor,
    v: Fp8Tensor,
}

impl BenchInputs {
    /// Standard normal Q, K, V of `shape`, quantized per head (seed 0).
    pub fn random(shape: BenchShape) -> BenchInputs {
        let (q, k, v) = random_problem(shape.q_dims(), shape.kv_dims(), 0);
        BenchInputs { shape, q, k, v }
    }
}

/// Checks then times `variant` on `inputs` in each launch mode. The output
/// is poisoned before the checked run; launches per sample adapt to the
/// kernel's time (about 2 ms a sample, at most `cfg.launches_per_sample`).
pub fn bench_shape(
    attn: &Attention,
    variant: Variant,
    inputs: &BenchInputs,
    cfg: &BenchConfig,
    modes: &[LaunchMode],
) -> Result<Vec<BenchRow>, AttnError> {
    let BenchInputs { shape, q, k, v } = inputs;
    let shape = *shape;
    let opts = Options { variant: variant.into(), ..cfg.options(shape.causal) };
    let plan = attn.plan(q, k, v, &opts)?;
    let dev = attn.upload(&plan, q, k, v)?;
    let mut out = attn.alloc_output(&dev)?;
    attn.poison(&mut out)?;
    attn.run(&dev, &mut out)?;
    let o = attn.download(&out)?;
    let softmax_scale = plan.problem().softmax_scale as f64;
    let (stats, gate) = check_dense_rows(inputs, cfg, variant, softmax_scale, Layout::Bhsd, |i| o.value(i));

    let launches = cfg.launches_for(attn.time_runs(&dev, &mut out, 1)?);
    let cfg = cfg.with_launches(launches);
    let mut result = Vec::new();
    for &mode in modes {
        let t = time_kernel(attn, &dev, &mut out, &cfg, mode)?;
        result.push(dense_row(variant, &plan, shape, Layout::Bhsd, (mode, launches), &t, (&stats, gate)));
    }
    Ok(result)
}

/// A dense shape's check before it is timed: the output's sampled rows
/// (`value(i)`: element `i` of the output as `layout` lays it) against the
/// f64 reference under `cfg`'s window and cap, judged by `variant`'s gate.
pub(crate) fn check_dense_rows(
    inputs: &BenchInputs,
    cfg: &BenchConfig,
    variant: Variant,
    softmax_scale: f64,
    layout: Layout,
    value: impl Fn(usize) -> f32,
) -> (ErrorStats, Tolerance) {
    let BenchInputs { shape, q, k, v } = inputs;
    let dims = shape.q_dims();
    let rows = sample_rows(dims, CHECK_ROWS, 1);
    let got: Vec<f32> = rows
        .iter()
        .flat_map(|&row| {
            let start = layout.row_offset(dims, row);
            (start..start + shape.head_dim).map(&value)
        })
        .collect();
    let reference = attention_rows_scored_f64(q, k, v, &cfg.score_rule(shape.causal), softmax_scale, &rows);
    let gate = Tolerance::of(variant);
    (compare(&got, &reference, gate.max_abs), gate)
}

/// The row of a dense shape's call (`plan`, inputs laid out as `layout`)
/// timed as `t` in `mode` with `launches` calls a sample, its check
/// `stats` judged by `gate`.
pub(crate) fn dense_row(
    variant: Variant,
    plan: &Plan,
    shape: BenchShape,
    layout: Layout,
    (mode, launches): (LaunchMode, usize),
    t: &Timing,
    check: (&ErrorStats, Tolerance),
) -> BenchRow {
    let label = RowLabel { variant, entry: plan.entry(), shape, cache: CacheLayout::default(), packed: None, layout };
    let problem = plan.problem();
    let work = RowWork { flops: problem.flops(), bytes: problem.min_bytes(), kv_bytes: shape.kv_bytes() };
    BenchRow::timed(label, (mode, launches), t, work, check)
}

/// What names a row: the kernel, the shape and how the inputs lie.
pub(crate) struct RowLabel {
    pub(crate) variant: Variant,
    pub(crate) entry: &'static str,
    pub(crate) shape: BenchShape,
    pub(crate) cache: CacheLayout,
    pub(crate) packed: Option<Vec<usize>>,
    pub(crate) layout: Layout,
}

/// What one call computes and moves, for a row's rates: floating-point
/// operations, bytes read and written, and the K and V bytes among them.
pub(crate) struct RowWork {
    pub(crate) flops: f64,
    pub(crate) bytes: f64,
    pub(crate) kv_bytes: f64,
}

impl BenchRow {
    /// The row of `label` timed as `t` in `mode` with `launches` calls a
    /// sample, its rates from `work`, its check `stats` judged by `gate`.
    pub(crate) fn timed(
        label: RowLabel,
        (mode, launches): (LaunchMode, usize),
        t: &Timing,
        work: RowWork,
        (stats, gate): (&ErrorStats, Tolerance),
    ) -> BenchRow {
        let seconds = t.median_us * 1e-6;
        BenchRow {
            variant: label.variant.name(),
            entry: label.entry,
            shape: label.shape,
            cache: label.cache,
            packed: label.packed,
            layout: label.layout,
            mode: mode.name(),
            launches_per_sample: launches,
            median_us: t.median_us,
            p10_us: t.p10_us,
            p90_us: t.p90_us,
            std_us: t.std_us,
            tflops: work.flops / seconds / 1e12,
            gbytes_per_s: work.bytes / seconds / 1e9,
            kv_tb_s: work.kv_bytes / seconds / 1e12,
            rel_l2: stats.rel_l2,
            max_abs: stats.max_abs,
            nan_count: stats.nan_count,
            correct: gate.passes(stats),
        }
    }

    /// The table's shape column: the shape, or a packed batch's
    /// [`packed_label`].
    pub fn shape_label(&self) -> String {
        if self.packed.is_some() { packed_label(&self.shape) } else { self.shape.label() }
    }

    /// The table's cache column: `packed:N` for a packed batch of N
    /// sequences, `bshd` for `[B, S, H, D]` tensors, else the cache's
    /// [`CacheLayout::label`].
    pub fn layout_label(&self) -> String {
        match (&self.packed, self.layout) {
            (Some(lens), _) => format!("packed:{}", lens.len()),
            (None, Layout::Bshd) => Layout::Bshd.name().to_string(),
            (None, _) => self.cache.label(),
        }
    }
}

/// How [`bench_decode_cache`] lays out the K/V cache: contiguous or in
/// pages, whole or with per-sequence lengths.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct CacheLayout {
    /// Keys per page of a paged cache (the pages shuffled over the pools
    /// by the page table); `None`: contiguous.
    pub page_size: Option<usize>,
    /// Keys each sequence holds (`seqused_k`), cycled over the batch;
    /// `None`: every sequence holds all `Skv`.
    pub seq_used_k: Option<Vec<usize>>,
}

impl CacheLayout {
    /// `contig` or `paged:N`, then `+lens` with `seq_used_k`.
    pub fn label(&self) -> String {
        let layout = self.page_size.map_or("contig".to_string(), |n| format!("paged:{n}"));
        if self.seq_used_k.is_some() { format!("{layout}+lens") } else { layout }
    }

    /// Each sequence's key length for `shape`: `seq_used_k` cycled over
    /// the batch, or `Skv` for all.
    pub fn lengths(&self, shape: &BenchShape) -> Vec<usize> {
        match &self.seq_used_k {
            Some(lens) if !lens.is_empty() => (0..shape.batch).map(|b| lens[b % lens.len()]).collect(),
            _ => vec![shape.seq_kv; shape.batch],
        }
    }
}

/// A paged copy of a contiguous cache: each batch's `ceil(Skv / page_size)`
/// pages at pool pages a seeded shuffle picks, the keys past `Skv` in its
/// last page zero codes.
pub struct PagedCopy {
    /// The table, `[batch, max_pages]` row-major.
    pub table: Vec<i32>,
    /// Pages per batch.
    pub max_pages: usize,
    /// K's pool `[batch * max_pages, page_size, Hkv, D]`.
    pub k: Fp8Tensor,
    /// V's pool, as K's.
    pub v: Fp8Tensor,
}

impl PagedCopy {
    /// Lays out `k` and `v` (`[B, Hkv, Skv, D]`) in pages of `page_size` keys.
    pub fn new(k: &Fp8Tensor, v: &Fp8Tensor, page_size: usize) -> PagedCopy {
        let [batch, heads, seq, d] = k.shape;
        let max_pages = seq.div_ceil(page_size);
        let pages = batch * max_pages;
        let mut table: Vec<i32> = (0..pages as i32).collect();
        let mut rng = SplitMix64::new(0x9A6E);
        for i in (1..pages).rev() {
            table.swap(i, rng.below(i as u64 + 1) as usize);
        }
        let pool = |t: &Fp8Tensor| {
            let mut codes = vec![0u8; pages * page_size * heads * d];
            for b in 0..batch {
                for key in 0..seq {
                    let page = table[b * max_pages + key / page_size] as usize;
                    for h in 0..heads {
                        let from = ((b * heads + h) * seq + key) * d;
                        let to = ((page * page_size + key % page_size) * heads + h) * d;
                        codes[to..to + d].copy_from_slice(&t.data[from..from + d]);
                    }
                }
            }
            from_codes(codes, [pages, page_size, heads, d], t.scales.clone())
        };
        PagedCopy { max_pages, k: pool(k), v: pool(v), table }
    }
}

/// Times `decode` on `inputs` through the device API
/// ([`Attention::run_views_with`], [`Attention::run_paged`]) with the
/// cache as `layout` says, after checking sampled rows of each sequence
/// against the f64 reference of its own keys. A paged cache whose `Skv` is
/// not a whole number of pages is read with `seq_used_k` (each `Skv` where
/// `layout` gives none), so that it sees the same keys as the contiguous
/// one. `graph-overlap` is refused: these calls have no overlapped launch.
pub fn bench_decode_cache(
    attn: &Attention,
    inputs: &BenchInputs,
    cfg: &BenchConfig,
    modes: &[LaunchMode],
    layout: &CacheLayout,
) -> Result<Vec<BenchRow>, AttnError> {
    cfg.plain_scores("bench_decode_cache")?;
    let BenchInputs { shape, q, k, v } = inputs;
    let shape = *shape;
    if modes.contains(&LaunchMode::GraphOverlap) {
        return Err(AttnError::VariantUnavailable {
            variant: Variant::Decode.name(),
            reason: "graph-overlap: a run through the device API has no overlapped launch".into(),
        });
    }
    let lens = layout.lengths(&shape);
    if let Some(&len) = lens.iter().find(|&&len| len > shape.seq_kv) {
        return Err(AttnError::ShapeMismatch(format!("seq_used_k {len} is past the cache's {} keys", shape.seq_kv)));
    }
    let paged = layout.page_size.map(|page_size| PagedCopy::new(k, v, page_size));
    let kv_dims = match (&paged, layout.page_size) {
        (Some(p), Some(page_size)) => [shape.batch, shape.heads_kv, p.max_pages * page_size, shape.head_dim],
        _ => shape.kv_dims(),
    };
    let pass_lens = layout.seq_used_k.is_some() || kv_dims != shape.kv_dims();
    let opts = Options::new().causal(shape.causal).variant(Variant::Decode).output(cfg.output);
    let plan = attn.plan_shapes(shape.q_dims(), kv_dims, kv_dims, &opts)?;
    let mut run = CacheRun::new(attn, plan, q, k, v, paged.as_ref(), pass_lens.then_some(&lens))?;

    run.poison()?;
    run.call()?;
    let o = run.output()?;
    let stats = check_against_own_keys(inputs, &o, &lens, run.plan.problem().softmax_scale as f64);
    let gate = Tolerance::of(Variant::Decode);

    let launches = cfg.launches_for(time_on_stream(attn.stream(), || run.call())?);
    let cfg = cfg.with_launches(launches);
    let keys: usize = lens.iter().sum();
    let kv_bytes = 2.0 * (shape.heads_kv * shape.head_dim * keys) as f64;
    let flops = 4.0 * (shape.heads_q * shape.seq_q * shape.head_dim * keys) as f64;
    let q_bytes = 3.0 * shape.q_dims().iter().product::<usize>() as f64;
    let mut rows = Vec::new();
    for &mode in modes {
        let counts = (cfg.warmup_launches.max(1), cfg.launches_per_sample);
        let t = time_calls(attn.stream(), cfg.samples, counts, mode, || run.call())?;
        let label = RowLabel {
            variant: Variant::Decode,
            entry: run.plan.kernel().entry,
            shape,
            cache: layout.clone(),
            packed: None,
            layout: Layout::Bhsd,
        };
        let work = RowWork { flops, bytes: kv_bytes + q_bytes, kv_bytes };
        rows.push(BenchRow::timed(label, (mode, launches), &t, work, (&stats, gate)));
    }
    Ok(rows)
}

/// Sampled rows of `o` against the f64 reference of each sequence's own
/// keys (its first `lens[b]`; zeros where it holds none).
fn check_against_own_keys(inputs: &BenchInputs, o: &[f32], lens: &[usize], scale: f64) -> ErrorStats {
    let BenchInputs { shape, q, k, v } = inputs;
    let d = shape.head_dim;
    let rows = sample_rows(shape.q_dims(), CHECK_ROWS, 1);
    let (mut got, mut want) = (Vec::new(), Vec::new());
    for (b, &len) in lens.iter().enumerate() {
        let batch_rows: Vec<(usize, usize, usize)> =
            rows.iter().filter(|r| r.0 == b).map(|&(_, h, s)| (0, h, s)).collect();
        if batch_rows.is_empty() {
            continue;
        }
        for &(_, h, s) in &batch_rows {
            let start = ((b * shape.heads_q + h) * shape.seq_q + s) * d;
            got.extend_from_slice(&o[start..start + d]);
        }
        if len == 0 {
            want.extend(std::iter::repeat_n(0.0, batch_rows.len() * d));
        } else {
            let (qb, kb, vb) = (rows_of(q, b, shape.seq_q), rows_of(k, b, len), rows_of(v, b, len));
            want.extend(attention_rows_f64(&qb, &kb, &vb, shape.causal, scale, &batch_rows));
        }
    }
    compare(&got, &want, Tolerance::of(Variant::Decode).max_abs)
}

/// Batch `b` of a `[B, H, S, D]` tensor, its first `len` rows of each head,
/// as a tensor of one batch.
fn rows_of(t: &Fp8Tensor, b: usize, len: usize) -> Fp8Tensor {
    let [_, heads, seq, d] = t.shape;
    let data = (0..heads).flat_map(|h| &t.data[((b * heads + h) * seq) * d..][..len * d]).copied().collect();
    from_codes(data, [1, heads, len, d], t.scales.clone())
}

/// One `decode` call's buffers on the device, for [`bench_decode_cache`].
struct CacheRun<'a> {
    attn: &'a Attention,
    plan: Plan,
    q: CudaSlice<u8>,
    /// Contiguous K and V, or the pools.
    k: CudaSlice<u8>,
    v: CudaSlice<u8>,
    kv_shape: [usize; 4],
    /// The page table and its `[batch, max_pages]`, for a paged cache.
    table: Option<(CudaSlice<i32>, [usize; 2])>,
    lens: Option<CudaSlice<i32>>,
    scales: [CudaSlice<f32>; 3],
    ws: Workspace,
    o: CudaSlice<u16>,
}

impl<'a> CacheRun<'a> {
    /// Uploads Q, K and V (or `paged`'s pools and table) and `lens`.
    fn new(
        attn: &'a Attention,
        plan: Plan,
        q: &Fp8Tensor,
        k: &Fp8Tensor,
        v: &Fp8Tensor,
        paged: Option<&PagedCopy>,
        lens: Option<&Vec<usize>>,
    ) -> Result<CacheRun<'a>, AttnError> {
        let stream = attn.stream();
        let (k, v, table) = match paged {
            Some(p) => (&p.k, &p.v, Some((stream.clone_htod(&p.table)?, [q.shape[0], p.max_pages]))),
            None => (k, v, None),
        };
        let lens = lens.map(|l| stream.clone_htod(&l.iter().map(|&n| n as i32).collect::<Vec<_>>())).transpose()?;
        let scales = [&q.scales, &k.scales, &v.scales].map(|s| stream.clone_htod(s));
        let [qs, ks, vs] = scales;
        Ok(CacheRun {
            attn,
            q: stream.clone_htod(&q.data)?,
            k: stream.clone_htod(&k.data)?,
            v: stream.clone_htod(&v.data)?,
            kv_shape: k.shape,
            table,
            lens,
            scales: [qs?, ks?, vs?],
            ws: attn.workspace(&plan)?,
            o: stream.alloc_zeros(plan.problem().q_len())?,
            plan,
        })
    }

    /// Launches the call (asynchronously).
    fn call(&mut self) -> Result<(), AttnError> {
        let p = self.plan.problem();
        let q = Fp8View::new(self.q.as_view(), p.q_shape())?;
        let (k, v) = (Fp8View::new(self.k.as_view(), self.kv_shape)?, Fp8View::new(self.v.as_view(), self.kv_shape)?);
        let [qs, ks, vs] = &self.scales;
        let scales = DeviceScales::new(qs.as_view(), ks.as_view(), vs.as_view(), ScaleLayout::PerHead);
        let mut out = OutputViewMut::new(self.o.as_view_mut(), p.output, p.q_shape())?;
        let mut extras = RunExtras::new();
        if let Some(lens) = &self.lens {
            extras = extras.seq_used_k(lens.as_view());
        }
        match &self.table {
            Some((table, table_shape)) => {
                let kv = PagedKv::new(k, v, table.as_view(), *table_shape)?;
                self.attn.run_paged(&self.plan, &q, &kv, &scales, &mut out, &mut self.ws, extras)
            }
            None => self.attn.run_views_with(&self.plan, &q, &k, &v, &scales, &mut out, &mut self.ws, extras),
        }
    }

    /// Overwrites the output with NaNs ([`POISON`]).
    fn poison(&mut self) -> Result<(), AttnError> {
        poison_output(self.attn, &mut self.o)
    }

    /// Waits for the stream and reads the output back as f32.
    fn output(&self) -> Result<Vec<f32>, AttnError> {
        read_output(self.attn, &self.o, self.plan.problem().output)
    }
}

/// Overwrites an output buffer with NaNs ([`POISON`]) on `attn`'s stream.
pub(crate) fn poison_output(attn: &Attention, o: &mut CudaSlice<u16>) -> Result<(), AttnError> {
    let poison = vec![POISON; o.len()];
    attn.stream().memcpy_htod(&poison, o)?;
    Ok(())
}

/// Waits for `attn`'s stream and reads an output buffer of `dtype` back as
/// f32.
pub(crate) fn read_output(attn: &Attention, o: &CudaSlice<u16>, dtype: OutputDtype) -> Result<Vec<f32>, AttnError> {
    let bits = attn.stream().clone_dtoh(o)?;
    attn.stream().synchronize()?;
    Ok(bits.iter().map(|&x| crate::tensor::to_f32(dtype, x)).collect())
}

/// Times `call` as [`time_kernel`] times a kernel: `warmup` calls, then
/// `samples` samples of `per_sample` calls, each issued back to back
/// (`Direct`) or replayed from a CUDA graph of them (`Graph`, and
/// `GraphOverlap`: these calls have no overlapped launch, so a caller
/// that means it refuses it first).
fn time_calls(
    stream: &std::sync::Arc<CudaStream>,
    samples: usize,
    (warmup, per_sample): (usize, usize),
    mode: LaunchMode,
    mut call: impl FnMut() -> Result<(), AttnError>,
) -> Result<Timing, AttnError> {
    let per_sample = per_sample.max(1);
    let mut calls = |n: usize| (0..n).try_for_each(|_| call());
    calls(warmup)?;
    let graph = match mode {
        LaunchMode::Direct => None,
        LaunchMode::Graph | LaunchMode::GraphOverlap => {
            stream.synchronize()?;
            stream.begin_capture(CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)?;
            let recorded = calls(per_sample);
            // The capture ends whether or not every call was recorded.
            let graph = stream.end_capture(CUgraphInstantiate_flags(0))?;
            recorded?;
            let graph = graph.ok_or_else(|| AttnError::ShapeMismatch("graph capture recorded no call".into()))?;
            graph.upload()?;
            Some(graph)
        }
    };
    let mut taken = Vec::with_capacity(samples.max(1));
    for _ in 0..samples.max(1) {
        let ms = match &graph {
            Some(g) => time_on_stream(stream, || Ok(g.launch()?))?,
            None => time_on_stream(stream, || calls(per_sample))?,
        };
        taken.push(f64::from(ms) * 1e3 / per_sample as f64);
    }
    Ok(Timing::from_samples(taken))
}

#[cfg(test)]
mod tests {
    use super::BenchShape;

    #[test]
    fn shapes_parse_and_print_back() {
        let s = BenchShape::parse("2,8,256,64,causal").unwrap();
        assert_eq!((s.batch, s.heads_q, s.heads_kv, s.seq_q, s.seq_kv, s.head_dim), (2, 8, 8, 256, 256, 64));
        assert!(s.causal);
        assert_eq!(s.label(), "2,8,256,64,causal");
        assert!(!BenchShape::parse("1, 8, 512, 64").unwrap().causal);
        for text in super::DEFAULT_SHAPES {
            assert_eq!(BenchShape::parse(text).unwrap().label(), text);
        }
    }

    #[test]
    fn grouped_heads_and_unequal_lengths_parse_and_print_back() {
        let s = BenchShape::parse("64,32:8,1:8192,128").unwrap();
        assert_eq!((s.batch, s.heads_q, s.heads_kv, s.seq_q, s.seq_kv, s.head_dim), (64, 32, 8, 1, 8192, 128));
        assert_eq!((s.q_dims(), s.kv_dims()), ([64, 32, 1, 128], [64, 8, 8192, 128]));
        assert!(s.is_decode() && !s.causal);
        assert_eq!(s.kv_bytes(), 2.0 * 64.0 * 8.0 * 8192.0 * 128.0);
        assert!(!BenchShape::parse("1,8,17:4096,64").unwrap().is_decode());
        assert!(BenchShape::parse("1,8,16:4096,64").unwrap().is_decode());
        // Equal sides print short; each pair on its own.
        assert_eq!(BenchShape::parse("2,8:8,256:256,64").unwrap().label(), "2,8,256,64");
        assert_eq!(BenchShape::parse("2,8:2,256,64").unwrap().label(), "2,8:2,256,64");
        assert_eq!(BenchShape::parse("2, 8, 16 : 512, 64, causal").unwrap().label(), "2,8,16:512,64,causal");
        for text in ["64,32:8,1:8192,128", "8,32:8,16:32768,128,causal", "1,4:1,3,64", "3,6:3,100:7,128"] {
            let s = BenchShape::parse(text).unwrap();
            assert_eq!(s.label(), text);
            assert_eq!(BenchShape::parse(&s.label()).unwrap(), s);
        }
    }

    #[test]
    fn malformed_shapes_are_refused_with_the_reason() {
        let why = |text: &str| BenchShape::parse(text).unwrap_err();
        assert!(why("64,32:12,1,128").contains("not a multiple"), "{}", why("64,32:12,1,128"));
        assert!(why("2,8:16,256,64").contains("not a multiple"));
        for zero in ["0,8,256,64", "2,0,256,64", "2,8:0,256,64", "2,8,0:256,64", "2,8,256:0,64", "2,8,256,0"] {
            assert!(why(zero).contains("above zero"), "{zero}: {}", why(zero));
        }
        for junk in [
            "",
            "1,2,3",
            "1,2,3,4,5",
            "1,2,x,4",
            "1,2,3,4,maybe",
            "-1,2,3,4",
            "1,2:,3,4",
            "1,:2,3,4",
            "1,4:2:1,3,4",
            "1,2,3:4:5,4",
            "1,2,3,4:4",
            "1:1,2,3,4",
            "1,2,3,4,causal,causal",
        ] {
            assert!(BenchShape::parse(junk).is_err(), "{junk}");
        }
    }

    #[test]
    #[ignore = "needs an NVIDIA GPU with compute capability 8.9+; run on a GPU machine (README: GPU tests)"]
    fn grouped_and_decode_shapes_bench_correctly_beside_the_copy() {
        use super::{BenchConfig, BenchInputs, LaunchMode, bench_shape, time_copy};
        let attn = crate::Attention::new(0).expect("a GPU for the GPU tests");
        let cfg = BenchConfig { samples: 3, launches_per_sample: 4, ..BenchConfig::default() };
        for mode in LaunchMode::ALL {
            let copy = time_copy(&attn, &cfg, mode).expect("times the copy");
            let expected = if mode == LaunchMode::Direct { "direct" } else { "graph" };
            assert_eq!(copy.mode, expected);
            // From an L4's 0.3 TB/s to an H200's 4.8 (read + written).
            assert!(copy.tb_s > 0.05 && copy.tb_s < 20.0, "{copy:?}");
            println!("{mode:?}: copy {:.2} TB/s", copy.tb_s);
        }
        for text in ["2,8:2,1:1000,128", "1,4:1,16:300,64,causal", "2,8:4,64:513,64,causal", "1,2,130,64"] {
            let inputs = BenchInputs::random(BenchShape::parse(text).unwrap());
            for variant in attn.variants() {
                let rows = bench_shape(&attn, variant, &inputs, &cfg, &[LaunchMode::Graph]).expect("benches");
                let r = &rows[0];
                assert!(r.correct, "{} {text}: rel L2 {:.1e}, max abs {:.1e}", variant.name(), r.rel_l2, r.max_abs);
                assert!(r.kv_tb_s > 0.0 && r.tflops > 0.0, "{r:?}");
            }
        }
    }

    #[test]
    fn a_paged_copy_read_through_its_table_is_the_contiguous_cache() {
        use super::PagedCopy;
        let kv = [3, 2, 100, 64];
        let (_, k, v) = crate::quant::random_problem([3, 4, 1, 64], kv, 9);
        let paged = PagedCopy::new(&k, &v, 32);
        assert_eq!((paged.max_pages, paged.k.shape), (4, [12, 32, 2, 64]));
        let mut pages = paged.table.clone();
        pages.sort_unstable();
        assert_eq!(pages, (0..12).collect::<Vec<_>>(), "every pool page used once");
        assert_ne!(paged.table, pages, "the pages are shuffled");
        for (pool, t) in [(&paged.k, &k), (&paged.v, &v)] {
            assert_eq!(pool.scales, t.scales);
            for (b, h, key) in [(0, 0, 0), (1, 1, 31), (2, 0, 32), (2, 1, 99), (1, 0, 64)] {
                let page = paged.table[b * paged.max_pages + key / 32] as usize;
                let at = ((page * 32 + key % 32) * 2 + h) * 64;
                let from = ((b * 2 + h) * 100 + key) * 64;
                assert_eq!(pool.data[at..at + 64], t.data[from..from + 64], "batch {b} head {h} key {key}");
            }
        }
        // The last page's keys past Skv = 100 are zero codes.
        let last = paged.table[3] as usize;
        assert!(paged.k.data[(last * 32 + 4) * 128..(last + 1) * 32 * 128].iter().all(|&c| c == 0));
    }

    #[test]
    fn cache_layouts_label_and_cycle_their_lengths() {
        use super::CacheLayout;
        let shape = BenchShape::parse("5,8:2,1:4096,128").unwrap();
        let whole = CacheLayout::default();
        assert_eq!((whole.label(), whole.lengths(&shape)), ("contig".to_string(), vec![4096; 5]));
        let paged = CacheLayout { page_size: Some(64), seq_used_k: Some(vec![1, 4096]) };
        assert_eq!(paged.label(), "paged:64+lens");
        assert_eq!(paged.lengths(&shape), [1, 4096, 1, 4096, 1]);
        assert_eq!(CacheLayout { page_size: Some(256), seq_used_k: None }.label(), "paged:256");
        assert_eq!(CacheLayout { page_size: None, seq_used_k: Some(vec![7]) }.label(), "contig+lens");
    }

    use super::Timing;

    #[test]
    fn timing_summary_orders_and_picks_quantiles() {
        let t = Timing::from_samples((1..=11).rev().map(f64::from).collect());
        assert_eq!(t.median_us, 6.0);
        assert_eq!(t.p10_us, 2.0);
        assert_eq!(t.p90_us, 10.0);
        assert!((t.std_us - 10f64.sqrt()).abs() < 1e-12);
    }
}
