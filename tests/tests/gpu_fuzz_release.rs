//! GPU fuzzing at release scale: every kernel of the loaded image
//! (`SDPA_IMAGE`, docs/testing.md), 10,000 cases each by default, against
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
//! `SDPA_FUZZ_WORKERS` the preparing threads, and
//! `SDPA_FUZZ_REPLAY=<entry>:<seed>` runs one case alone, as a failure
//! prints it.

use kernels_gpu::kernels::KernelInfo;
use sdpa::{Attention, AttnError, Options};
use sdpa_tests::batch::{EntryReport, Prepared, Verdict, check, prepare, run_batch};
use sdpa_tests::fuzz::Judge;
use sdpa_tests::open_gpu;
use sdpa_tests::release_cases::{REPLAY_ENV, Replay, Settings, case_seeds, release_case};
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
fn describe(kernel: &KernelInfo, case: &FuzzCase) -> String {
    let s = &case.shape;
    let replay = Replay { entry: kernel.entry.to_string(), seed: case.seed };
    format!(
        "B={} Hq={} Hkv={} Sq={} Skv={} D={} causal={} scale exponents (q, k, v) {:?} seed={:#x} \
         [{REPLAY_ENV}={replay}]",
        s.batch, s.heads_q, s.heads_kv, s.seq_q, s.seq_kv, s.head_dim, s.causal, case.scale_exponents, case.seed
    )
}

/// Runs the one case `replay` names and prints it with its errors.
fn replay_one(attn: &Attention, replay: &Replay) {
    let kernel = attn
        .kernels()
        .find(|k| k.entry == replay.entry)
        .unwrap_or_else(|| panic!("{REPLAY_ENV}: no kernel {} in the loaded image", replay.entry));
    let case = release_case(kernel, replay.seed);
    println!("replaying {}: {}", kernel.entry, describe(kernel, &case));
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
        "release fuzz: seed {:#x}, {} cases per kernel, {} preparing threads",
        settings.seed, settings.cases, settings.workers
    );
    let mut reports = Vec::new();
    for kernel in attn.kernels() {
        let cases: Vec<FuzzCase> =
            case_seeds(settings.seed, kernel, settings.cases).into_iter().map(|s| release_case(kernel, s)).collect();
        let report = run_batch(kernel, &cases, settings.workers, Judge::of(kernel, (REL_L2, MAX_REL)), |p| {
            run_on_gpu(&attn, kernel, p)
        });
        println!("{report}");
        for f in report.failures.iter().take(PRINTED_FAILURES) {
            println!("  FAIL case {}: {}: {}", f.index, describe(kernel, &f.case), f.reason);
        }
        reports.push(report);
    }
    let total = EntryReport::total(&reports);
    println!("{total} over {} kernels", reports.len());
    assert!(total.failures.is_empty(), "{} of {} cases failed (listed above)", total.failures.len(), total.cases);
}
