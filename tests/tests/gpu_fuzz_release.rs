//! GPU fuzzing at release scale: every kernel of the loaded image
//! (`SDPA_IMAGE`, docs/testing.md) and its score twins over `[B, H, S, D]`
//! tensors (a sliding window, a softcap: windows on and beside the tile
//! edges, `release_cases::release_scored_case`), 10,000 cases each entry
//! by default, against
//! the f64 reference, in one process: worker threads draw the inputs and
//! compute the references while this thread uploads, poisons the output,
//! runs and downloads (`sdpa_tests::batch`). The cases sit on and around
//! every tile edge of the kernel (`sdpa_tests::release_cases`); the
//! judges are `gpu_fuzz`'s (a lower-precision kernel's: each element
//! within its bound, `sdpa_tests::pv_bound`). Prints one line per kernel
//! (cases, failures, worst rel_l2 and max_rel, and the worst error over
//! its bound where there is one, seconds) and a total.
//!
//! Ignored without a GPU; on a GPU machine:
//! `gpu-bundle/bin/gpu_fuzz_release --ignored --nocapture`
//! (`SDPA_IMAGE=sm_89` in front: the sm_89 kernels). `SDPA_FUZZ_CASES`
//! sets the cases per kernel, `SDPA_FUZZ_SEED` the run's seed,
//! `SDPA_FUZZ_WORKERS` the preparing threads, `SDPA_FUZZ_ENTRIES` the
//! entries (comma-separated parts of their names, e.g. `window,softcap`),
//! and `SDPA_FUZZ_REPLAY=<entry>:<seed>` runs one case alone, as a failure
//! prints it.

use kernels_gpu::kernels::{KernelInfo, ScoreForm};
use sdpa::{Attention, AttnError, Options};
use sdpa_tests::batch::{EntryReport, Prepared, Verdict, check, prepare, run_batch};
use sdpa_tests::fuzz::Judge;
use sdpa_tests::open_gpu;
use sdpa_tests::release_cases::{REPLAY_ENV, Replay, Settings, case_seeds, release_scored_case};
use sdpa_tests::shapes::FuzzCase;

/// `gpu_fuzz`'s tolerances: the correctness gate's relative L2 error, and
/// a largest error relative to the largest output; a lower-precision
/// variant is judged by its per-element bound instead
/// (`sdpa_tests::fuzz::Judge::of`).
const REL_L2: f64 = 2e-2;
const MAX_REL: f64 = 3e-2;

/// Failures printed in full per kernel (all are counted).
const PRINTED_FAILURES: usize = 20;

/// Runs `p` on `kernel` with the reference's softmax scale: its inputs
/// uploaded, the output poisoned, the kernel run and the output
/// downloaded, as f32.
fn run_on_gpu(attn: &Attention, kernel: &'static KernelInfo, p: &Prepared) -> Result<Vec<f32>, String> {
    let on_gpu = || -> Result<Vec<f32>, AttnError> {
        let opts = Options::new()
            .causal(p.case.shape.causal)
            .scale(p.softmax_scale)
            .variant(kernel.variant)
            .output(kernel.output);
        let opts = p.case.scores.map_or(opts, |s| s.apply(opts));
        // (A window or a cap runs the kernel's score twin: `Plan::entry`.)
        let plan = attn.plan(&p.q, &p.k, &p.v, &opts)?.with_kernel(kernel)?;
        let dev = attn.upload(&plan, &p.q, &p.k, &p.v)?;
        let mut out = attn.alloc_output(&dev)?;
        attn.poison(&mut out)?;
        attn.run(&dev, &mut out)?;
        Ok(attn.download(&out)?.values())
    };
    on_gpu().map_err(|e| e.to_string())
}

/// One line that says everything about a case, and how to run it again.
fn describe(entry: &str, case: &FuzzCase) -> String {
    let s = &case.shape;
    let replay = Replay { entry: entry.to_string(), seed: case.seed };
    let scores =
        case.scores.map_or(String::new(), |x| format!(" window ({:?}, {:?}) softcap {:?}", x.left, x.right, x.softcap));
    format!(
        "B={} Hq={} Hkv={} Sq={} Skv={} D={} causal={}{scores} scale exponents (q, k, v) {:?} seed={:#x} \
         [{REPLAY_ENV}={replay}]",
        s.batch, s.heads_q, s.heads_kv, s.seq_q, s.seq_kv, s.head_dim, s.causal, case.scale_exponents, case.seed
    )
}

/// The entries the fuzz runs: each kernel's own (`ScoreForm::Plain`) and
/// its score twins over `[B, H, S, D]` tensors (`Window`, `Softcap`), with
/// the kernel that plans them.
fn entries(attn: &Attention) -> Vec<(&'static KernelInfo, ScoreForm, &'static str)> {
    let forms = [ScoreForm::Plain, ScoreForm::Window, ScoreForm::Softcap];
    attn.kernels()
        .flat_map(|k| forms.into_iter().filter_map(move |form| k.entry_for(false, form).map(|e| (k, form, e))))
        .collect()
}

/// Runs the one case `replay` names and prints it with its errors.
fn replay_one(attn: &Attention, replay: &Replay) {
    let (kernel, form, entry) = entries(attn)
        .into_iter()
        .find(|(_, _, entry)| *entry == replay.entry)
        .unwrap_or_else(|| panic!("{REPLAY_ENV}: no entry {} in the loaded image", replay.entry));
    let case = release_scored_case(kernel, replay.seed, form);
    println!("replaying {entry}: {}", describe(entry, &case));
    let p = prepare(0, case, Judge::of(kernel, (REL_L2, MAX_REL)));
    let out = run_on_gpu(attn, kernel, &p).unwrap_or_else(|e| panic!("device error: {e}"));
    match check(&p, &out) {
        Verdict::Pass(m) => match m.bound_ratio {
            Some(ratio) => println!("PASS {} max_rel={:.2e} error/bound={ratio:.2}", m.stats, m.max_rel),
            None => println!("PASS {} max_rel={:.2e}", m.stats, m.max_rel),
        },
        Verdict::Fail { reason, .. } => panic!("FAIL {reason}"),
    }
}

/// Mixed into the run's seed for a twin's cases, so each entry of a
/// kernel gets cases of its own (the plain entry keeps the run's seed).
fn form_stream(form: ScoreForm) -> u64 {
    match form {
        ScoreForm::Plain => 0,
        ScoreForm::Window => 0x0000_5749_4E44_4F57,
        ScoreForm::Softcap => 0x0053_4F46_5443_4150,
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU with compute capability 8.9+; run on a GPU machine (README: GPU tests)"]
fn every_kernel_matches_the_reference_at_release_scale() {
    let settings = Settings::from_env().unwrap_or_else(|e| panic!("{e}"));
    let attn = open_gpu();
    if let Some(replay) = &settings.replay {
        replay_one(&attn, replay);
        return;
    }
    println!(
        "release fuzz: seed {:#x}, {} cases per kernel, {} preparing threads{}",
        settings.seed,
        settings.cases,
        settings.workers,
        if settings.entries.is_empty() { String::new() } else { format!(", entries with {:?}", settings.entries) }
    );
    let mut reports = Vec::new();
    for (kernel, form, entry) in entries(&attn).into_iter().filter(|(_, _, entry)| settings.fuzzes(entry)) {
        let seeds = case_seeds(settings.seed ^ form_stream(form), kernel, settings.cases);
        let cases: Vec<FuzzCase> = seeds.into_iter().map(|s| release_scored_case(kernel, s, form)).collect();
        let mut report = run_batch(kernel, &cases, settings.workers, Judge::of(kernel, (REL_L2, MAX_REL)), |p| {
            run_on_gpu(&attn, kernel, p)
        });
        report.entry = entry;
        println!("{report}");
        for f in report.failures.iter().take(PRINTED_FAILURES) {
            println!("  FAIL case {}: {}: {}", f.index, describe(entry, &f.case), f.reason);
        }
        reports.push(report);
    }
    let total = EntryReport::total(&reports);
    println!("{total} over {} entries", reports.len());
    assert!(total.failures.is_empty(), "{} of {} cases failed (listed above)", total.failures.len(), total.cases);
}
