//! GPU fuzzing of the packed twins (`KernelInfo::packed`: the `wgmma`
//! variants at D = 64 and 128, f16 and bf16): packed batches of sequences
//! of their own lengths (`Attention::run_packed`) and batches of equal
//! lengths as `[B, S, H, D]` tensors (`Layout::Bshd`), lengths on and
//! around the tile edges (0, 1, 62-66, 126-130, 190-194), causal or not,
//! GQA and MQA; every sequence against the f64 reference of its own rows,
//! the output poisoned first (NaN never passes), judged as `gpu_fuzz`
//! judges. 48 cases per kernel by default; `PROPTEST_CASES` sets it.
//!
//! Ignored without a GPU; on a GPU machine with the sm_90a image:
//! `gpu-bundle/bin/gpu_fuzz_packed --ignored --nocapture --test-threads=1`.

use kernels_gpu::kernels::KernelInfo;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use sdpa::quant::random_problem;
use sdpa::tensor::to_f32;
use sdpa::{Attention, Layout, Options};
use sdpa_tests::fuzz::Judge;
use sdpa_tests::packing::{batch_of, prefix_sums, rows_of, run_packed};
use sdpa_tests::{BshdRun, open_gpu};

/// `gpu_fuzz`'s tolerances.
const TOLERANCES: (f64, f64) = (2e-2, 3e-2);

/// A batch: per-sequence (query, key) lengths, the heads, the mask, and
/// whether it runs as `[B, S, H, D]` tensors (every sequence the first
/// one's lengths, none empty).
#[derive(Clone, Debug)]
struct Batch {
    lens: Vec<(usize, usize)>,
    heads: (usize, usize),
    causal: bool,
    bshd: bool,
    seed: u64,
}

fn length() -> impl Strategy<Value = usize> {
    prop_oneof![Just(0usize), Just(1), 62usize..67, 126usize..131, 190usize..195, 0usize..260]
}

fn batches() -> impl Strategy<Value = Batch> {
    let heads = prop_oneof![Just((4, 2)), Just((2, 2)), Just((4, 1)), Just((6, 3))];
    let bshd = prop_oneof![2 => Just(false), 1 => Just(true)];
    (prop::collection::vec((length(), length()), 1..6), heads, any::<bool>(), bshd, any::<u64>()).prop_map(
        |(lens, heads, causal, bshd, seed)| {
            let lens = if bshd { vec![(lens[0].0.max(1), lens[0].1.max(1)); lens.len()] } else { lens };
            Batch { lens, heads, causal, bshd, seed }
        },
    )
}

/// One batch on `kernel` (through its variant and output type): each
/// sequence's output, `[Hq, len_q, D]`, against the f64 reference of its
/// own rows.
fn check_batch(attn: &Attention, kernel: &'static KernelInfo, batch: &Batch) -> Result<(), TestCaseError> {
    let d = kernel.tiles.head_dim as usize;
    let (hq, hkv) = batch.heads;
    let (cu_q, cu_k) = (prefix_sums(batch.lens.iter().map(|l| l.0)), prefix_sums(batch.lens.iter().map(|l| l.1)));
    let (total_q, total_k) = (*cu_q.last().unwrap() as usize, *cu_k.last().unwrap() as usize);
    // Empty tensors are refused before a launch.
    prop_assume!(total_q > 0 && total_k > 0);
    let opts = Options::new().causal(batch.causal).variant(kernel.variant).output(kernel.output);
    let fail = |e: sdpa::AttnError| TestCaseError::fail(format!("{}: {e}", kernel.entry));
    // Each sequence's output as `[Hq, len_q, D]`, and its inputs.
    let sequences: Vec<_> = if batch.bshd {
        let (b, (sq, skv)) = (batch.lens.len(), batch.lens[0]);
        let (q, k, v) = random_problem([b, hq, sq, d], [b, hkv, skv, d], batch.seed);
        let plan = attn.plan_shapes(q.shape, k.shape, v.shape, &opts.layout(Layout::Bshd)).map_err(fail)?;
        let bits = BshdRun::upload(attn, plan, (&q, &k, &v)).and_then(|mut r| r.run(attn)).map_err(fail)?;
        let per_batch = hq * sq * d;
        (0..b)
            .map(|i| {
                let got: Vec<f32> =
                    bits[i * per_batch..][..per_batch].iter().map(|&x| to_f32(kernel.output, x)).collect();
                (got, (batch_of(&q, i), batch_of(&k, i), batch_of(&v, i)))
            })
            .collect()
    } else {
        let max = [0, 1].map(|i| batch.lens.iter().map(|l| if i == 0 { l.0 } else { l.1 }).max().unwrap().max(1));
        let (q, k, v) = random_problem([1, hq, total_q, d], [1, hkv, total_k, d], batch.seed);
        let stream = attn.stream();
        let out = run_packed(stream, attn, (&q, &k, &v), (&cu_q, &cu_k), max, &opts).map_err(fail)?;
        batch
            .lens
            .iter()
            .enumerate()
            .map(|(b, &(lq, lk))| {
                let (q0, k0) = (cu_q[b] as usize, cu_k[b] as usize);
                let got: Vec<f32> = (0..hq)
                    .flat_map(|h| (0..lq).flat_map(move |i| (0..d).map(move |c| ((q0 + i) * hq + h) * d + c)))
                    .map(|at| out.o[at])
                    .collect();
                (got, (rows_of(&q, q0, lq), rows_of(&k, k0, lk), rows_of(&v, k0, lk)))
            })
            .collect()
    };
    let scale = 1.0 / (d as f64).sqrt();
    for (b, (got, (q, k, v))) in sequences.iter().enumerate() {
        let (lq, lk) = batch.lens[b];
        if lq == 0 {
            continue;
        }
        let passed = if lk == 0 {
            got.iter().all(|&x| x == 0.0)
        } else {
            Judge::of(kernel, TOLERANCES).reference(q, k, v, batch.causal, scale).judge(got).passed
        };
        prop_assert!(passed, "{} sequence {b} ({lq}, {lk}) of {batch:?}", kernel.entry);
    }
    Ok(())
}

#[test]
#[ignore = "needs an NVIDIA GPU with the sm_90a image (Hopper); run on a GPU machine (README: GPU tests)"]
fn packed_twins_match_the_reference_on_tile_and_sequence_edges() {
    let attn = open_gpu();
    let cases = std::env::var("PROPTEST_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(48);
    let kernels: Vec<&'static KernelInfo> = attn.kernels().filter(|k| k.packed.is_some()).collect();
    assert!(!kernels.is_empty(), "no kernel with a packed twin in the loaded image (sm_90a only)");
    let mut failures = Vec::new();
    for kernel in kernels {
        let mut runner = TestRunner::new(Config { cases, failure_persistence: None, ..Config::default() });
        let started = std::time::Instant::now();
        match runner.run(&batches(), |batch| check_batch(&attn, kernel, &batch)) {
            Ok(()) => println!("{}: {cases} batches passed ({:.1} s)", kernel.entry, started.elapsed().as_secs_f64()),
            Err(e) => {
                println!("{}: FAILED {e}", kernel.entry);
                failures.push(format!("{}: {e}", kernel.entry));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
