//! Timing: CUDA events around back-to-back launches or graph replays,
//! repeated, summarised; the device-to-device copy rate timed the same way.

use crate::attention::{Attention, DeviceOutput, DeviceProblem, Launch};
use crate::error::AttnError;
use crate::metrics::{ErrorStats, Tolerance, compare};
use crate::options::Options;
use crate::quant::random_problem;
use crate::reference::{attention_rows_f64, sample_rows};
use crate::tensor::Fp8Tensor;
use cudarc::driver::CudaStream;
use cudarc::driver::sys::{CUevent_flags, CUgraphInstantiate_flags, CUstreamCaptureMode};
use kernels_gpu::variant::{OutputDtype, Variant};
use serde::Serialize;

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
}

impl Default for BenchConfig {
    fn default() -> Self {
        BenchConfig { launches_per_sample: 100, samples: 20, warmup_launches: 50, output: OutputDtype::F16 }
    }
}

/// Target device time of one sample when choosing launches per sample.
const SAMPLE_TARGET_MS: f64 = 2.0;

impl BenchConfig {
    /// Launches per sample for work whose one call took `one_call_ms`:
    /// about [`SAMPLE_TARGET_MS`] of work, 1 to `launches_per_sample`.
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
    let mut copies = |n: usize| -> Result<(), AttnError> {
        for _ in 0..n {
            stream.memcpy_dtod(&src, &mut dst)?;
        }
        Ok(())
    };
    copies(1)?;
    let launches = cfg.launches_for(time_on_stream(stream, || copies(1))?);
    copies(cfg.warmup_launches.min(launches * 5))?;
    let graph = match mode {
        LaunchMode::Direct => None,
        LaunchMode::Graph | LaunchMode::GraphOverlap => {
            stream.synchronize()?;
            stream.begin_capture(CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)?;
            let recorded = copies(launches);
            // The capture ends whether or not every copy was recorded.
            let graph = stream.end_capture(CUgraphInstantiate_flags(0))?;
            recorded?;
            let graph = graph.ok_or_else(|| AttnError::ShapeMismatch("graph capture recorded no copy".into()))?;
            graph.upload()?;
            Some(graph)
        }
    };
    let mut samples = Vec::with_capacity(cfg.samples.max(1));
    for _ in 0..cfg.samples.max(1) {
        let ms = match &graph {
            Some(g) => time_on_stream(stream, || Ok(g.launch()?))?,
            None => time_on_stream(stream, || copies(launches))?,
        };
        samples.push(f64::from(ms) * 1e3 / launches as f64);
    }
    let t = Timing::from_samples(samples);
    Ok(CopyRate {
        bytes: COPY_BYTES,
        mode: if graph.is_some() { LaunchMode::Graph.name() } else { LaunchMode::Direct.name() },
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
    /// counted, the causally masked ones too: causal is not halved).
    pub tflops: f64,
    /// Minimum bytes moved (Q, K, V once, O once) over the median, in GB/s.
    pub gbytes_per_s: f64,
    /// K and V bytes (`2 B Hkv Skv D`, E4M3) over the median, in TB/s: what
    /// bounds a decode shape's time (compare with [`CopyRate::tb_s`]).
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
    let (shape, q_dims) = (*shape, shape.q_dims());
    let opts = Options { causal: shape.causal, scale: None, variant: variant.into(), output: cfg.output };
    let plan = attn.plan(q, k, v, &opts)?;
    let dev = attn.upload(&plan, q, k, v)?;
    let mut out = attn.alloc_output(&dev)?;
    attn.poison(&mut out)?;
    attn.run(&dev, &mut out)?;
    let o = attn.download(&out)?;
    let rows = sample_rows(q_dims, CHECK_ROWS, 1);
    let d = shape.head_dim;
    let got: Vec<_> = rows
        .iter()
        .flat_map(|&(b, h, s)| {
            let start = ((b * shape.heads_q + h) * shape.seq_q + s) * d;
            (start..start + d).map(|i| o.value(i))
        })
        .collect();
    let reference = attention_rows_f64(q, k, v, shape.causal, plan.problem().softmax_scale as f64, &rows);
    let gate = Tolerance::of(variant);
    let stats: ErrorStats = compare(&got, &reference, gate.max_abs);

    let launches = cfg.launches_for(attn.time_runs(&dev, &mut out, 1)?);
    let cfg =
        BenchConfig { launches_per_sample: launches, warmup_launches: cfg.warmup_launches.min(launches * 5), ..*cfg };
    let mut result = Vec::new();
    for &mode in modes {
        let t = time_kernel(attn, &dev, &mut out, &cfg, mode)?;
        result.push(BenchRow {
            variant: variant.name(),
            entry: plan.kernel().entry,
            shape,
            mode: mode.name(),
            launches_per_sample: launches,
            median_us: t.median_us,
            p10_us: t.p10_us,
            p90_us: t.p90_us,
            std_us: t.std_us,
            tflops: plan.problem().flops() / (t.median_us * 1e-6) / 1e12,
            gbytes_per_s: plan.problem().min_bytes() / (t.median_us * 1e-6) / 1e9,
            kv_tb_s: shape.kv_bytes() / (t.median_us * 1e-6) / 1e12,
            rel_l2: stats.rel_l2,
            max_abs: stats.max_abs,
            nan_count: stats.nan_count,
            correct: gate.passes(&stats),
        });
    }
    Ok(result)
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
