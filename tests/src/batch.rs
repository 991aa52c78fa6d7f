//! Many fuzz cases through one device, as fast as the f64 reference
//! allows: worker threads draw each case's inputs and compute its
//! reference ([`prepare`]) while the calling thread runs the cases on the
//! device, in the order they come ready, and judges each output
//! ([`check`]). The device is a closure, so the same machinery runs the
//! GPU (`tests/tests/gpu_fuzz_release.rs`) and, in the CPU tests, the
//! emulation.

use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Instant;

use kernels_gpu::kernels::KernelInfo;
use sdpa::Fp8Tensor;
use sdpa::metrics::ErrorStats;

use crate::fuzz::{Expected, Judge, case_inputs};
use crate::shapes::FuzzCase;

/// A case ready for the device: its inputs and their f64 reference (with
/// what its judge needs beside it: `fuzz::Expected`).
pub struct Prepared {
    /// Its position in the list of cases.
    pub index: usize,
    /// The case.
    pub case: FuzzCase,
    /// Q `[B, Hq, Sq, D]`.
    pub q: Fp8Tensor,
    /// K `[B, Hkv, Skv, D]`.
    pub k: Fp8Tensor,
    /// V `[B, Hkv, Skv, D]`.
    pub v: Fp8Tensor,
    /// The softmax scale the reference used, `1 / sqrt(D)` in f32 (the
    /// library's default, `sdpa::Options::scale`).
    pub softmax_scale: f32,
    /// The f64 reference output `[B, Hq, Sq, D]` and how an output is
    /// judged against it.
    pub expected: Expected,
    /// Seconds its worker thread took to make it (about core seconds
    /// where the workers do not outnumber the cores).
    pub seconds: f64,
}

/// Draws `case`'s inputs (`fuzz::case_inputs`) and computes their f64
/// reference for `judge` under the case's scores
/// (`fuzz::Judge::reference_scored`).
pub fn prepare(index: usize, case: FuzzCase, judge: Judge) -> Prepared {
    let start = Instant::now();
    let (q, k, v) = case_inputs(&case);
    let softmax_scale = 1.0 / (case.shape.head_dim as f32).sqrt();
    let expected = judge.reference_scored((&q, &k, &v), &case.rule(), f64::from(softmax_scale));
    Prepared { index, case, q, k, v, softmax_scale, expected, seconds: start.elapsed().as_secs_f64() }
}

/// How far one output is from its reference.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Measured {
    /// The comparison (`sdpa::metrics::compare`).
    pub stats: ErrorStats,
    /// The largest error over the largest |reference| value.
    pub max_rel: f64,
    /// For a lower-precision kernel (`fuzz::Judge::PvBound`), the largest
    /// error over its element's allowed error.
    pub bound_ratio: Option<f64>,
}

/// A case that failed, and why.
#[derive(Clone, Debug, PartialEq)]
pub struct Failure {
    /// Its position in the list of cases.
    pub index: usize,
    /// The case (its seed replays it: `release_cases::Replay`).
    pub case: FuzzCase,
    /// The device's error, or the comparison that failed.
    pub reason: String,
}

/// The judgement of one case.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    /// Within the tolerance, no NaN.
    Pass(Measured),
    /// Outside it, or no output to compare.
    Fail {
        /// The comparison, when the output could be compared.
        measured: Option<Measured>,
        /// What went wrong, in words.
        reason: String,
    },
}

/// Judges `out` (the device's output, as f32) against `p`'s reference
/// (`fuzz::Expected::judge`): an output of the wrong length, or with any
/// NaN, fails.
pub fn check(p: &Prepared, out: &[f32]) -> Verdict {
    let expected = p.expected.values().len();
    if out.len() != expected {
        let reason = format!("{} output elements, {expected} expected", out.len());
        return Verdict::Fail { measured: None, reason };
    }
    let judgement = p.expected.judge(out);
    let measured = Measured { stats: judgement.stats, max_rel: judgement.max_rel, bound_ratio: judgement.bound_ratio };
    if judgement.passed {
        Verdict::Pass(measured)
    } else {
        Verdict::Fail { measured: Some(measured), reason: judgement.summary }
    }
}

/// What a batch of one kernel's cases found.
#[derive(Clone, Debug, PartialEq)]
pub struct EntryReport {
    /// The kernel's entry symbol.
    pub entry: &'static str,
    /// Cases run.
    pub cases: usize,
    /// The cases that failed, in the order of the list of cases.
    pub failures: Vec<Failure>,
    /// The largest relative L2 error of any case whose output could be
    /// compared (failed ones included).
    pub worst_rel_l2: f64,
    /// The largest max_rel ([`Measured::max_rel`]) of any such case.
    pub worst_max_rel: f64,
    /// The largest error over its allowed error ([`Measured::bound_ratio`])
    /// of any such case, for a lower-precision kernel.
    pub worst_bound_ratio: Option<f64>,
    /// Wall seconds.
    pub seconds: f64,
    /// Seconds the calling thread spent in the device closure.
    pub device_seconds: f64,
    /// Seconds the workers spent in [`prepare`], summed.
    pub reference_seconds: f64,
}

impl EntryReport {
    fn new(entry: &'static str) -> EntryReport {
        EntryReport {
            entry,
            cases: 0,
            failures: Vec::new(),
            worst_rel_l2: 0.0,
            worst_max_rel: 0.0,
            worst_bound_ratio: None,
            seconds: 0.0,
            device_seconds: 0.0,
            reference_seconds: 0.0,
        }
    }

    /// Counts case `p`, judged `verdict`.
    fn add(&mut self, p: &Prepared, verdict: Verdict) {
        self.cases += 1;
        let measured = match verdict {
            Verdict::Pass(m) => Some(m),
            Verdict::Fail { measured, reason } => {
                self.failures.push(Failure { index: p.index, case: p.case, reason });
                measured
            }
        };
        if let Some(m) = measured {
            self.worst_rel_l2 = self.worst_rel_l2.max(m.stats.rel_l2);
            self.worst_max_rel = self.worst_max_rel.max(m.max_rel);
            self.worst_bound_ratio = max_ratio(self.worst_bound_ratio, m.bound_ratio);
        }
    }

    /// The reports of several kernels as one (named `total`).
    pub fn total(reports: &[EntryReport]) -> EntryReport {
        let mut t = EntryReport::new("total");
        for r in reports {
            t.cases += r.cases;
            t.failures.extend(r.failures.iter().cloned());
            t.worst_rel_l2 = t.worst_rel_l2.max(r.worst_rel_l2);
            t.worst_max_rel = t.worst_max_rel.max(r.worst_max_rel);
            t.worst_bound_ratio = max_ratio(t.worst_bound_ratio, r.worst_bound_ratio);
            t.seconds += r.seconds;
            t.device_seconds += r.device_seconds;
            t.reference_seconds += r.reference_seconds;
        }
        t
    }
}

/// The larger of two optional ratios (`None` when both are).
fn max_ratio(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    }
}

impl fmt::Display for EntryReport {
    /// `<entry>: <n> cases, <f> failures, worst rel_l2 <e>, worst max_rel
    /// <e>[, worst error/bound <r>], <t> s (device <t> s, references <t>
    /// core-s)`; the error over its bound where the kernel is judged by one.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {} cases, {} failures, worst rel_l2 {:.1e}, worst max_rel {:.1e}",
            self.entry,
            self.cases,
            self.failures.len(),
            self.worst_rel_l2,
            self.worst_max_rel
        )?;
        if let Some(ratio) = self.worst_bound_ratio {
            write!(f, ", worst error/bound {ratio:.2}")?;
        }
        write!(
            f,
            ", {:.1} s (device {:.1} s, references {:.1} core-s)",
            self.seconds, self.device_seconds, self.reference_seconds
        )
    }
}

/// Runs `cases` of `kernel` through `device` (on the calling thread: it
/// gets a prepared case and returns the output as f32, or an error), with
/// `workers` threads preparing cases ahead of it (at most two each
/// waiting), and judges each output with [`check`] by `judge`.
pub fn run_batch<D>(
    kernel: &'static KernelInfo,
    cases: &[FuzzCase],
    workers: usize,
    judge: Judge,
    mut device: D,
) -> EntryReport
where
    D: FnMut(&Prepared) -> Result<Vec<f32>, String>,
{
    let start = Instant::now();
    let mut report = EntryReport::new(kernel.entry);
    let next = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        let (ready, prepared) = mpsc::sync_channel::<Prepared>(2 * workers.max(1));
        for _ in 0..workers.max(1) {
            let (ready, next) = (ready.clone(), &next);
            scope.spawn(move || {
                loop {
                    let index = next.fetch_add(1, Ordering::Relaxed);
                    let Some(&case) = cases.get(index) else { break };
                    if ready.send(prepare(index, case, judge)).is_err() {
                        break;
                    }
                }
            });
        }
        drop(ready);
        for p in prepared {
            report.reference_seconds += p.seconds;
            let on_device = Instant::now();
            let out = device(&p);
            report.device_seconds += on_device.elapsed().as_secs_f64();
            let verdict = match out {
                Ok(out) => check(&p, &out),
                Err(e) => Verdict::Fail { measured: None, reason: format!("device error: {e}") },
            };
            report.add(&p, verdict);
        }
    });
    report.failures.sort_by_key(|f| f.index);
    report.seconds = start.elapsed().as_secs_f64();
    report
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::emulate::{Inputs, emulate, emulate_scored};
    use crate::release_cases::{case_seeds, release_case};
    use half::{bf16, f16};
    use kernels_gpu::kernels::KERNELS;
    use kernels_gpu::variant::OutputDtype;
    use std::collections::HashMap;
    use std::sync::Mutex;

    /// The CPU emulation's tolerances (`tests/cpu_fuzz.rs`).
    const EMULATION: (f64, f64) = (1e-2, 2e-2);

    /// A tolerance these tests judge by.
    const TOLERANCE: Judge = Judge::Tolerance { rel_l2: 2e-2, max_rel: 3e-2 };

    fn cases(kernel: &KernelInfo, count: usize) -> Vec<FuzzCase> {
        case_seeds(7, kernel, count).into_iter().map(|s| release_case(kernel, s)).collect()
    }

    /// A device in these tests: a prepared case in, an output (or an error) out.
    type Device = fn(&Prepared) -> Result<Vec<f32>, String>;

    /// The reference itself as a device's output (rounded to f32).
    fn exact(p: &Prepared) -> Result<Vec<f32>, String> {
        Ok(p.expected.values().iter().map(|&x| x as f32).collect())
    }

    /// Every kernel, emulated through the batch; the lower-precision ones
    /// judged by their per-element bound (`pv_bound`).
    #[test]
    fn the_emulated_kernels_pass_every_case_through_the_batch() {
        for kernel in KERNELS.iter() {
            let round = |x: f32| match kernel.output {
                OutputDtype::F16 => f16::from_f32(x).to_f32(),
                OutputDtype::Bf16 => bf16::from_f32(x).to_f32(),
            };
            let emulated = |p: &Prepared| {
                let x =
                    Inputs { q: &p.q, k: &p.k, v: &p.v, causal: p.case.shape.causal, softmax_scale: p.softmax_scale };
                Ok(emulate(kernel, &x).into_iter().map(round).collect())
            };
            let report = run_batch(kernel, &cases(kernel, 4), 2, Judge::of(kernel, EMULATION), emulated);
            assert_eq!((report.entry, report.cases), (kernel.entry, 4));
            assert!(report.failures.is_empty(), "{report}: {:?}", report.failures);
            assert!(report.worst_rel_l2 > 0.0 && report.worst_max_rel > 0.0, "{report}");
            let bounded = kernel.variant.lower_precision();
            assert_eq!(report.worst_bound_ratio.is_some(), bounded, "{report}");
            assert_eq!(report.to_string().contains("worst error/bound"), bounded, "{report}");
        }
    }

    /// The release fuzz's cases of every score twin (windows on and beside
    /// the tile edges, caps), emulated through the batch and judged as the
    /// GPU's are: the cases, their references and the judges agree with
    /// the kernels' arithmetic before a GPU runs them.
    #[test]
    fn the_emulated_score_twins_pass_their_release_cases_through_the_batch() {
        use crate::release_cases::release_scored_case;
        use kernels_gpu::kernels::ScoreForm;
        let mut twins = 0;
        for kernel in KERNELS.iter().filter(|k| k.scores.is_some()) {
            let round = |x: f32| match kernel.output {
                OutputDtype::F16 => f16::from_f32(x).to_f32(),
                OutputDtype::Bf16 => bf16::from_f32(x).to_f32(),
            };
            for form in [ScoreForm::Window, ScoreForm::Softcap] {
                if kernel.entry_for(false, form).is_none() {
                    continue;
                }
                let cases: Vec<FuzzCase> =
                    case_seeds(11, kernel, 6).into_iter().map(|s| release_scored_case(kernel, s, form)).collect();
                assert!(cases.iter().all(|c| c.scores.is_some_and(|s| s.causal == c.shape.causal)));
                let emulated = |p: &Prepared| {
                    let x = Inputs {
                        q: &p.q,
                        k: &p.k,
                        v: &p.v,
                        causal: p.case.shape.causal,
                        softmax_scale: p.softmax_scale,
                    };
                    let scores = p.case.scores.expect("a scored case").emulated();
                    Ok(emulate_scored(kernel, &x, scores).into_iter().map(round).collect())
                };
                let report = run_batch(kernel, &cases, 2, Judge::of(kernel, EMULATION), emulated);
                assert!(report.failures.is_empty(), "{} {form:?}: {report}: {:?}", kernel.entry, report.failures);
                twins += 1;
            }
        }
        assert!(twins >= 16, "only {twins} score twins emulated");
    }

    #[test]
    fn parallel_references_equal_serial_ones_and_each_case_runs_once() {
        let kernel = &KERNELS[1];
        let cases = cases(kernel, 24);
        let seen = Mutex::new(HashMap::new());
        let judge = Judge::Tolerance { rel_l2: 1e-6, max_rel: 1e-6 };
        let report = run_batch(kernel, &cases, 3, judge, |p| {
            let values = p.expected.values().to_vec();
            assert!(seen.lock().unwrap().insert(p.index, values).is_none(), "case {} twice", p.index);
            exact(p)
        });
        assert_eq!((report.cases, report.failures.len()), (24, 0));
        let seen = seen.into_inner().unwrap();
        assert_eq!(seen.len(), 24);
        for (index, case) in cases.into_iter().enumerate() {
            let serial = prepare(index, case, judge);
            assert_eq!(serial.case, case);
            assert!(seen[&index] == serial.expected.values(), "case {index}: the references differ");
        }
    }

    #[test]
    fn a_nan_a_wrong_length_an_error_or_a_small_drift_fails_with_the_case() {
        let kernel = &KERNELS[0];
        let cases = cases(kernel, 6);
        let broken: [(&str, Device); 4] = [
            ("nan=1", |p| {
                exact(p).map(|mut o| {
                    *o.last_mut().unwrap() = f32::NAN;
                    o
                })
            }),
            ("output elements", |p| {
                exact(p).map(|mut o| {
                    o.pop();
                    o
                })
            }),
            ("device error: refused", |_| Err("refused".into())),
            ("rel_l2=5.0e-2", |p| Ok(p.expected.values().iter().map(|&x| (x * 1.05) as f32).collect())),
        ];
        for (what, device) in broken {
            let report = run_batch(kernel, &cases, 2, TOLERANCE, device);
            assert_eq!((report.cases, report.failures.len()), (6, 6), "{what}");
            for (i, f) in report.failures.iter().enumerate() {
                assert_eq!((f.index, f.case), (i, cases[i]), "{what}");
                assert!(f.reason.contains(what), "{what}: {}", f.reason);
            }
        }
        let report = run_batch(kernel, &cases, 2, TOLERANCE, exact);
        assert!(report.failures.is_empty() && report.worst_rel_l2 < 1e-6, "{report}");
    }

    #[test]
    fn the_total_adds_the_kernels_up() {
        let kernel = &KERNELS[0];
        let a = run_batch(kernel, &cases(kernel, 3), 1, TOLERANCE, exact);
        let b = run_batch(kernel, &cases(kernel, 2), 1, TOLERANCE, |_| Err("refused".into()));
        let total = EntryReport::total(&[a.clone(), b.clone()]);
        assert_eq!((total.entry, total.cases, total.failures.len()), ("total", 5, 2));
        assert_eq!(total.worst_rel_l2, a.worst_rel_l2);
        assert!(total.to_string().starts_with("total: 5 cases, 2 failures, worst rel_l2"), "{total}");
    }
}
