//! The correctness gate on the GPU: every variant of the loaded image
//! (`SDPA_IMAGE`, docs/testing.md), every gate case, seeds
//! 0, 1, 2, against the f64 reference, output poisoned before each run,
//! repeat bit-identical; then every variant's bf16 kernels on the same
//! cases with seed 0, and on outputs beyond f16's range. The variants that
//! read `[B, S, H, D]` tensors (their packed twins; `decode` with one query
//! row) run the seed-0 cases in that layout too.
//!
//! Ignored without a GPU. On a GPU machine: `cargo xtask bundle` here, then
//! there `gpu-bundle/bin/gpu_gate --ignored --nocapture --test-threads=1`
//! (README, "GPU tests"); `SDPA_IMAGE=sm_89` in front runs the sm_89
//! kernels, `SDPA_GATE_VARIANTS=decode,split` only the variants named.

use sdpa::{Layout, Variant};
use sdpa_tests::{BF16_SEEDS, GateCase, SEEDS, bf16_gate_cases, gate_cases, open_gpu, run_case};

#[test]
#[ignore = "needs an NVIDIA GPU with compute capability 8.9+; run on a GPU machine (README: GPU tests)"]
fn correctness_gate_every_variant() {
    let attn = open_gpu();
    let mut failures = Vec::new();
    let mut total = 0;
    let f16_runs = gate_cases().into_iter().flat_map(|case| SEEDS.map(|seed| (case, seed)));
    let bf16_runs = bf16_gate_cases().into_iter().flat_map(|case| BF16_SEEDS.map(|seed| (case, seed)));
    let runs: Vec<_> = f16_runs.chain(bf16_runs).collect();
    // `SDPA_GATE_VARIANTS=a,b` runs those variants only.
    let only = std::env::var("SDPA_GATE_VARIANTS").ok();
    let loaded = attn.variants();
    if let Some(names) = only.as_deref() {
        for name in names.split(',') {
            assert!(loaded.iter().any(|v| v.name() == name), "SDPA_GATE_VARIANTS names {name:?}, not a loaded variant");
        }
    }
    let chosen = |v: &sdpa::Variant| only.as_deref().is_none_or(|names| names.split(',').any(|n| n == v.name()));
    for variant in loaded.into_iter().filter(chosen) {
        // `[B, S, H, D]`: every seed-0 case of the variants with packed
        // twins, and `decode`'s cases of one query row.
        let twins = attn.kernels().any(|k| k.variant == variant && k.packed.is_some());
        let reads_bshd = |case: &GateCase| twins || (variant == Variant::Decode && case.shape.seq_q == 1);
        for layout in Layout::ALL {
            let runs_in = |(case, seed): &&(GateCase, u64)| layout == Layout::Bhsd || (*seed == 0 && reads_bshd(case));
            for &(case, seed) in runs.iter().filter(runs_in) {
                let result = run_case(&attn, case, variant, seed, layout).expect("the case runs");
                println!("{result}");
                total += 1;
                if !result.passed {
                    failures.push(result.to_string());
                }
            }
        }
    }
    println!("{} passed, {} failed", total - failures.len(), failures.len());
    assert!(total > 0, "no case ran");
    assert!(failures.is_empty(), "failing cases:\n{}", failures.join("\n"));
}
