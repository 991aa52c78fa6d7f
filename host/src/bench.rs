//! Timing: CUDA events around back-to-back launches, repeated, summarised.

use crate::attention::{Attention, DeviceOutput, DeviceProblem};
use crate::error::AttnError;

/// How to time one (variant, shape).
#[derive(Clone, Copy, Debug)]
pub struct BenchConfig {
    /// Launches between the two events of one sample.
    pub launches_per_sample: usize,
    /// Samples (each one timed pair of events).
    pub samples: usize,
    /// Untimed launches first (module load, clocks, caches).
    pub warmup_launches: usize,
}

impl Default for BenchConfig {
    fn default() -> Self {
        BenchConfig { launches_per_sample: 100, samples: 20, warmup_launches: 50 }
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
}

impl LaunchMode {
    /// "direct" or "graph".
    pub fn name(self) -> &'static str {
        match self {
            LaunchMode::Direct => "direct",
            LaunchMode::Graph => "graph",
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
        LaunchMode::Graph => Some(attn.capture(dev, out, per_sample)?),
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

#[cfg(test)]
mod tests {
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
