//! GPU fuzzing: every kernel of the loaded image (`SDPA_IMAGE`,
//! docs/testing.md) against the f64 reference on
//! shapes that straddle its tile edges (the strategy the CPU suite uses),
//! each case with a poisoned output buffer. 128 cases per kernel by default
//! (512 per variant over its two head dimensions and two output types; the
//! bf16 kernels see V's scales up to 10^30 times the unit ones);
//! `PROPTEST_CASES` raises it.
//!
//! Ignored without a GPU; on a GPU machine:
//! `gpu-bundle/bin/gpu_fuzz --ignored --nocapture --test-threads=1`
//! (`SDPA_IMAGE=sm_89` in front: the sm_89 kernels).

use kernels_gpu::kernels::KernelInfo;
use proptest::prelude::*;
use proptest::test_runner::{Config, FileFailurePersistence, TestRunner};
use sdpa::Attention;
use sdpa_tests::fuzz::{Judge, case_inputs};
use sdpa_tests::shapes::fuzz_cases;
use sdpa_tests::{open_gpu, upload_kernel};

/// Tolerances on the GPU: the correctness gate's relative L2 error, and a
/// largest error relative to the largest output (the gate's 6e-2 absolute
/// bound at unit-scale outputs); a lower-precision variant is judged by
/// its per-element bound instead (`sdpa_tests::fuzz::Judge::of`).
const REL_L2: f64 = 2e-2;
const MAX_REL: f64 = 3e-2;

fn fuzz_kernel(attn: &Attention, kernel: &'static KernelInfo) -> Result<u32, String> {
    let cases = std::env::var("PROPTEST_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(128);
    let config = Config {
        cases,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct("tests/gpu_fuzz.proptest-regressions"))),
        ..Config::default()
    };
    let mut runner = TestRunner::new(config);
    runner
        .run(&fuzz_cases(kernel, 2, 8), |case| {
            let (q, k, v) = case_inputs(&case);
            let dev = upload_kernel(attn, kernel, (&q, &k, &v), case.shape.causal)
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
            let mut out = attn.alloc_output(&dev).map_err(|e| TestCaseError::fail(e.to_string()))?;
            attn.poison(&mut out).map_err(|e| TestCaseError::fail(e.to_string()))?;
            attn.run(&dev, &mut out).map_err(|e| TestCaseError::fail(e.to_string()))?;
            let o = attn.download(&out).map_err(|e| TestCaseError::fail(e.to_string()))?;
            let scale = f64::from(dev.plan().problem().softmax_scale);
            let expected = Judge::of(kernel, (REL_L2, MAX_REL)).reference(&q, &k, &v, case.shape.causal, scale);
            let judgement = expected.judge(&o.values());
            prop_assert!(judgement.passed, "{} {case:?}: {}", kernel.entry, judgement.summary);
            Ok(())
        })
        .map(|()| cases)
        .map_err(|e| format!("{}: {e}", kernel.entry))
}

#[test]
#[ignore = "needs an NVIDIA GPU with compute capability 8.9+; run on a GPU machine (README: GPU tests)"]
fn every_kernel_matches_the_reference_on_tile_edges() {
    let attn = open_gpu();
    let mut failures = Vec::new();
    for kernel in attn.kernels() {
        match fuzz_kernel(&attn, kernel) {
            Ok(n) => println!("{}: {n} cases passed", kernel.entry),
            Err(e) => {
                println!("{e}");
                failures.push(e);
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
