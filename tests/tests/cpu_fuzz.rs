//! CPU fuzzing of every kernel's tile schedule: the emulation (same index,
//! mask and online-softmax code as the kernels, f32 math) against the f64
//! reference on shapes that straddle the kernel's tile edges. Runs in CI.
//! `PROPTEST_CASES` raises the case count (default 32 per kernel).

use half::f16;
use kernels_gpu::kernels::{KERNELS, KernelInfo};
use kernels_gpu::variant::OutputDtype;
use proptest::prelude::*;
use proptest::test_runner::{Config, FileFailurePersistence, TestRunner};
use sdpa_tests::emulate::{Inputs, emulate};
use sdpa_tests::fuzz::{Judge, case_inputs};
use sdpa_tests::shapes::fuzz_cases;

/// Tolerances for the emulation: f32 math with P rounded to f16; with P
/// rounded to E4M3 (the lower-precision variants), each element within
/// its bound instead (`sdpa_tests::fuzz::Judge::of`).
const REL_L2: f64 = 1e-2;
const MAX_REL: f64 = 2e-2;

fn fuzz_kernel(kernel: &KernelInfo) {
    let cases = std::env::var("PROPTEST_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(32);
    let config = Config {
        cases,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct("tests/cpu_fuzz.proptest-regressions"))),
        ..Config::default()
    };
    let mut runner = TestRunner::new(config);
    let result = runner.run(&fuzz_cases(kernel, 2, 4), |case| {
        let (q, k, v) = case_inputs(&case);
        let softmax_scale = 1.0 / (case.shape.head_dim as f32).sqrt();
        let got = emulate(kernel, &Inputs { q: &q, k: &k, v: &v, causal: case.shape.causal, softmax_scale });
        let got: Vec<f32> = got.into_iter().map(|x| f16::from_f32(x).to_f32()).collect();
        let expected =
            Judge::of(kernel, (REL_L2, MAX_REL)).reference(&q, &k, &v, case.shape.causal, softmax_scale as f64);
        let judgement = expected.judge(&got);
        prop_assert!(judgement.passed, "{} {case:?}: {}", kernel.entry, judgement.summary);
        Ok(())
    });
    if let Err(e) = result {
        panic!("{}: {e}", kernel.entry);
    }
}

/// Every f16 kernel (a bf16 twin has the same schedule; only its store
/// rounds differently, which the emulation does not model).
#[test]
fn emulated_schedules_match_the_reference_on_tile_edges() {
    for kernel in KERNELS.iter().filter(|k| k.output == OutputDtype::F16) {
        fuzz_kernel(kernel);
    }
}
