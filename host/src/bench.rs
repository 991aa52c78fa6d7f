//! Timing: CUDA events around back-to-back launches, repeated, summarised.

use crate::attention::{Attention, DeviceOutput, DeviceProblem, Launch};
use crate::error::AttnError;
use crate::metrics::{ErrorStats, Tolerance, compare};
use crate::options::Options;
use crate::quant::random_problem;
use crate::reference::{attention_rows_f64, sample_rows};
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

/// A benchmark shape: `B,H,S,D` or `B,H,S,D,causal` (Sq = Skv = S, Hq = Hkv = H).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct BenchShape {
    /// Batch.
    pub batch: usize,
    /// Heads (query and key/value).
    pub heads: usize,
    /// Sequence length (query and key/value).
    pub seq: usize,
    /// Head dimension.
    pub head_dim: usize,
    /// Causal masking.
    pub causal: bool,
}

impl BenchShape {
    /// Parses `B,H,S,D` or `B,H,S,D,causal`.
    pub fn parse(text: &str) -> Result<BenchShape, String> {
        let parts: Vec<&str> = text.split(',').map(str::trim).collect();
        let bad = || format!("shape {text:?} is not B,H,S,D or B,H,S,D,causal");
        if !(4..=5).contains(&parts.len()) || (parts.len() == 5 && parts[4] != "causal") {
            return Err(bad());
        }
        let n: Vec<usize> = parts[..4].iter().map(|p| p.parse().map_err(|_| bad())).collect::<Result<_, _>>()?;
        Ok(BenchShape { batch: n[0], heads: n[1], seq: n[2], head_dim: n[3], causal: parts.len() == 5 })
    }

    /// `[B, H, S, D]`.
    pub fn dims(&self) -> [usize; 4] {
        [self.batch, self.heads, self.seq, self.head_dim]
    }

    /// The shape as it parses (`2,8,256,64` or `2,8,256,64,causal`).
    pub fn label(&self) -> String {
        let base = format!("{},{},{},{}", self.batch, self.heads, self.seq, self.head_dim);
        if self.causal { base + ",causal" } else { base }
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
    /// `4 B H S^2 D / median` in TFLOP/s (causal not halved).
    pub tflops: f64,
    /// Minimum bytes moved (Q, K, V once, O once) over the median, in GB/s.
    pub gbytes_per_s: f64,
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
/// Target device time of one sample when choosing launches per sample.
const SAMPLE_TARGET_MS: f64 = 2.0;

/// Checks then times `variant` on `shape` in each launch mode. The output
/// is poisoned before the checked run; launches per sample adapt to the
/// kernel's time (about 2 ms a sample, at most `cfg.launches_per_sample`).
pub fn bench_shape(
    attn: &Attention,
    variant: Variant,
    shape: BenchShape,
    cfg: &BenchConfig,
    modes: &[LaunchMode],
) -> Result<Vec<BenchRow>, AttnError> {
    let dims = shape.dims();
    let (q, k, v) = random_problem(dims, dims, 0);
    let opts = Options { causal: shape.causal, scale: None, variant: variant.into(), output: cfg.output };
    let plan = attn.plan(&q, &k, &v, &opts)?;
    let dev = attn.upload(&plan, &q, &k, &v)?;
    let mut out = attn.alloc_output(&dev)?;
    attn.poison(&mut out)?;
    attn.run(&dev, &mut out)?;
    let o = attn.download(&out)?;
    let rows = sample_rows(dims, CHECK_ROWS, 1);
    let d = shape.head_dim;
    let got: Vec<_> = rows
        .iter()
        .flat_map(|&(b, h, s)| {
            let start = ((b * shape.heads + h) * shape.seq + s) * d;
            (start..start + d).map(|i| o.value(i))
        })
        .collect();
    let reference = attention_rows_f64(&q, &k, &v, shape.causal, plan.problem().softmax_scale as f64, &rows);
    let gate = Tolerance::of(variant);
    let stats: ErrorStats = compare(&got, &reference, gate.max_abs);

    let one_call_ms = attn.time_runs(&dev, &mut out, 1)? as f64;
    let launches =
        ((SAMPLE_TARGET_MS / one_call_ms.max(1e-6)).round() as usize).clamp(1, cfg.launches_per_sample.max(1));
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
        assert_eq!((s.batch, s.heads, s.seq, s.head_dim, s.causal), (2, 8, 256, 64, true));
        assert_eq!(s.label(), "2,8,256,64,causal");
        assert!(!BenchShape::parse("1, 8, 512, 64").unwrap().causal);
        for bad in ["", "1,2,3", "1,2,3,4,5", "1,2,x,4", "1,2,3,4,maybe", "-1,2,3,4"] {
            assert!(BenchShape::parse(bad).is_err(), "{bad}");
        }
        for text in super::DEFAULT_SHAPES {
            assert_eq!(BenchShape::parse(text).unwrap().label(), text);
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
