//! CPU fuzzing of the packed twins' schedule (`emulate::emulate_packed`:
//! the grid over every sequence's blocks, each block's sequence found in
//! the prefix sums, its rows clamped as the kernels read them): on
//! well-formed batches every row of every sequence is written by exactly
//! one block and each sequence matches the f64 reference of its own rows;
//! on prefix sums no host checked (decreasing, past the totals, negative)
//! no block reads or writes past a tensor; sequences of equal lengths
//! without prefix sums (`[B, S, H, D]` tensors) are covered as well. Runs
//! in CI. `PROPTEST_CASES`
//! raises the case count (default 24 per kernel).

use kernels_gpu::kernels::{KERNELS, KernelInfo};
use kernels_gpu::variant::OutputDtype;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use sdpa::quant::random_problem;
use sdpa_tests::emulate::{Inputs, PackedInputs, SequenceStarts, emulate_packed};
use sdpa_tests::fuzz::Judge;
use sdpa_tests::packing::{prefix_sums, rows_of, sequence_rows_f16};

/// The emulation's tolerances, as `cpu_fuzz`'s.
const TOLERANCES: (f64, f64) = (1e-2, 2e-2);

/// A batch: per-sequence query and key lengths on and around the tile
/// edges, causal or not, and which prefix-sum entry to spoil (if any); or
/// sequences of equal lengths without prefix sums (`[B, S, H, D]`
/// tensors, `uniform`).
#[derive(Clone, Debug)]
struct Batch {
    lens: Vec<(u32, u32)>,
    causal: bool,
    spoil: Option<(usize, i32)>,
    uniform: bool,
    seed: u64,
}

fn length() -> impl Strategy<Value = u32> {
    prop_oneof![Just(0u32), Just(1), 62u32..67, 126u32..131, 190u32..195, 0u32..300]
}

fn batches() -> impl Strategy<Value = Batch> {
    let spoil = prop_oneof![
        3 => Just(None),
        1 => (0usize..8, prop_oneof![Just(-7i32), Just(i32::MAX), 0i32..400]).prop_map(Some),
    ];
    let uniform = prop_oneof![3 => Just(false), 1 => Just(true)];
    (prop::collection::vec((length(), length()), 1..6), any::<bool>(), spoil, uniform, any::<u64>()).prop_map(
        |(lens, causal, spoil, uniform, seed)| {
            if uniform {
                // Every sequence the first one's lengths, nothing to spoil.
                Batch { lens: vec![lens[0]; lens.len()], causal, spoil: None, uniform, seed }
            } else {
                Batch { lens, causal, spoil, uniform, seed }
            }
        },
    )
}

fn fuzz_packed(kernel: &KernelInfo) {
    let cases = std::env::var("PROPTEST_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(24);
    let mut runner = TestRunner::new(Config { cases, failure_persistence: None, ..Config::default() });
    let d = kernel.tiles.head_dim as usize;
    let result = runner.run(&batches(), |batch| {
        let (mut cu_q, mut cu_k) = (
            prefix_sums(batch.lens.iter().map(|l| l.0 as usize)),
            prefix_sums(batch.lens.iter().map(|l| l.1 as usize)),
        );
        let (total_q, total_k) = (*cu_q.last().unwrap() as usize, *cu_k.last().unwrap() as usize);
        // Empty tensors are refused before a launch (`Problem::packed`, and
        // `Problem::new` for `[B, S, H, D]`).
        prop_assume!(total_q > 0 && total_k > 0);
        prop_assume!(!batch.uniform || batch.lens[0].0 > 0 && batch.lens[0].1 > 0);
        let max = [0, 1].map(|i| batch.lens.iter().map(|l| if i == 0 { l.0 } else { l.1 }).max().unwrap().max(1));
        let (hq, hkv) = (4, 2);
        let (q, k, v) = random_problem([1, hq, total_q, d], [1, hkv, total_k, d], batch.seed);
        if let Some((entry, value)) = batch.spoil {
            let cu = if entry % 2 == 0 { &mut cu_q } else { &mut cu_k };
            let at = entry / 2 % cu.len();
            cu[at] = value;
        }
        let softmax_scale = 1.0 / (d as f32).sqrt();
        let tensors = Inputs { q: &q, k: &k, v: &v, causal: batch.causal, softmax_scale };
        let starts = if batch.uniform {
            SequenceStarts::Uniform { batch: batch.lens.len() as u32 }
        } else {
            SequenceStarts::PrefixSums { cu_q: &cu_q, cu_k: &cu_k }
        };
        let x = PackedInputs { tensors, starts, max_seqlen: max };
        // Spoiled or not, every range lies inside the tensors (a slice past
        // one panics in the emulation).
        let (out, writes) = emulate_packed(kernel, &x);
        if batch.spoil.is_some() {
            return Ok(());
        }
        prop_assert!(writes.iter().all(|&w| w == 1), "{}: rows written {writes:?}", kernel.entry);
        for (b, &(lq, lk)) in batch.lens.iter().enumerate() {
            let (q0, k0) = (cu_q[b] as usize, cu_k[b] as usize);
            if lq == 0 {
                continue;
            }
            let got = sequence_rows_f16(&out, [hq, total_q, d], q0, lq as usize);
            let (qb, kb, vb) =
                (rows_of(&q, q0, lq as usize), rows_of(&k, k0, lk as usize), rows_of(&v, k0, lk as usize));
            let passed = if lk == 0 {
                got.iter().all(|&x| x == 0.0)
            } else {
                let expected =
                    Judge::of(kernel, TOLERANCES).reference(&qb, &kb, &vb, batch.causal, softmax_scale as f64);
                expected.judge(&got).passed
            };
            prop_assert!(passed, "{} sequence {b} ({lq}, {lk}) of {batch:?}", kernel.entry);
        }
        Ok(())
    });
    if let Err(e) = result {
        panic!("{}: {e}", kernel.entry);
    }
}

/// Every kernel with a packed twin (the f16 ones: a bf16 twin's schedule
/// is the same).
#[test]
fn packed_schedules_cover_every_row_once_and_match_the_reference() {
    let kernels: Vec<_> = KERNELS.iter().filter(|k| k.packed.is_some() && k.output == OutputDtype::F16).collect();
    assert_eq!(kernels.len(), 4, "the packed twins of wgmma and wgmma-fp8pv at D = 64 and 128");
    for kernel in kernels {
        fuzz_packed(kernel);
    }
}
