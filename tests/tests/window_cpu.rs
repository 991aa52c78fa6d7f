//! CPU fuzzing of the window and softcap twins (`KernelInfo::scores`) of
//! the `wgmma` kernels and of `decode`: the emulation
//! (`emulate::emulate_scored`, the kernels' key ranges, edge masks and
//! capped scores in f32) against the f64 reference
//! (`sdpa::reference::attention_scored_f64`) over window edges (left/right
//! 0, 1, the 64-key tile size +- 1, windows that leave a row no key), with
//! causal masking, with GQA, dense and packed; then the plans' choice of
//! twins and their refusals. Runs in CI. `PROPTEST_CASES` raises the case
//! count (default 24 per kernel).

use half::f16;
use kernels_gpu::kernels::{KERNELS, KernelInfo};
use kernels_gpu::variant::OutputDtype;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use sdpa::plan::Plan;
use sdpa::quant::random_problem;
use sdpa::reference::attention_scored_f64;
use sdpa::validate::Problem;
use sdpa::{AttnError, Options, Target, Variant};
use sdpa_tests::emulate::{Inputs, PackedInputs, SequenceStarts, emulate_packed_scored, emulate_scored};
use sdpa_tests::fuzz::{judge, tolerance};
use sdpa_tests::packing::{prefix_sums, rows_of, sequence_rows_f16};
use sdpa_tests::pv_bound::{judge_within_bounds, reference_with_pv_bound_scored};
use sdpa_tests::scores::Scores;

/// The emulation's tolerances, as `cpu_fuzz`'s (the lower-precision
/// variants' gate for `wgmma-fp8pv`).
const TOLERANCES: (f64, f64) = (1e-2, 2e-2);

/// A window side: on and around the edges that matter.
fn side() -> impl Strategy<Value = Option<u32>> {
    prop_oneof![
        Just(None),
        Just(Some(0)),
        Just(Some(1)),
        (63u32..66).prop_map(Some),
        (127u32..130).prop_map(Some),
        (0u32..300).prop_map(Some),
    ]
}

/// A sequence length: on and around the tile edges (64-key tiles, 128- and
/// 192-row query blocks).
fn length() -> impl Strategy<Value = u32> {
    prop_oneof![Just(1u32), 62u32..67, 126u32..131, 190u32..195, 1u32..260]
}

fn scores() -> impl Strategy<Value = Scores> {
    let cap = prop_oneof![Just(None), Just(Some(1.0f32)), Just(Some(5.0)), Just(Some(30.0))];
    (side(), side(), any::<bool>(), cap).prop_map(|(left, right, causal, softcap)| Scores {
        left,
        right,
        causal,
        softcap,
    })
}

fn runner() -> TestRunner {
    let cases = std::env::var("PROPTEST_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(24);
    TestRunner::new(Config { cases, failure_persistence: None, ..Config::default() })
}

/// Scales that make the scores large enough for a cap to matter: the
/// softmax scale times 4.
fn softmax_scale(d: usize) -> f32 {
    4.0 / (d as f32).sqrt()
}

fn fuzz_dense(kernel: &KernelInfo) {
    let d = kernel.tiles.head_dim as usize;
    let heads = prop_oneof![Just((2usize, 1usize)), Just((4, 2)), Just((2, 2))];
    let cases = (length(), length(), heads, scores(), any::<u64>());
    let result = runner().run(&cases, |(sq, skv, (hq, hkv), scores, seed)| {
        let (q, k, v) = random_problem([1, hq, sq as usize, d], [1, hkv, skv as usize, d], seed);
        let scale = softmax_scale(d);
        let x = Inputs { q: &q, k: &k, v: &v, causal: scores.causal, softmax_scale: scale };
        let got: Vec<f32> =
            emulate_scored(kernel, &x, scores.emulated()).into_iter().map(|x| f16::from_f32(x).to_f32()).collect();
        let expected = attention_scored_f64(&q, &k, &v, &scores.rule(), scale as f64);
        let (rel_l2, max_rel) = tolerance(kernel, TOLERANCES);
        let (stats, passed) = judge(&got, &expected, rel_l2, max_rel);
        prop_assert!(passed, "{} ({sq}, {skv}, {hq}:{hkv}) {scores:?}: {stats:?}", kernel.entry);
        // E4M3 P·V: every element within its own bound too (the GPU tests'
        // judge for windows, where rows of few keys average nothing away).
        if kernel.variant.lower_precision() {
            let bounded = reference_with_pv_bound_scored(&q, &k, &v, &scores.rule(), scale as f64, true);
            let judged = judge_within_bounds(&got, &bounded, OutputDtype::F16);
            prop_assert!(judged.passed, "{} ({sq}, {skv}, {hq}:{hkv}) {scores:?}: {judged}", kernel.entry);
        }
        Ok(())
    });
    if let Err(e) = result {
        panic!("{}: {e}", kernel.entry);
    }
}

/// Packed batches of sequences of their own lengths, or of equal lengths
/// without prefix sums (`[B, S, H, D]` tensors, `uniform`).
fn fuzz_packed(kernel: &KernelInfo) {
    let d = kernel.tiles.head_dim as usize;
    let lens = prop::collection::vec((prop_oneof![Just(0u32), length()], prop_oneof![Just(0u32), length()]), 1..5);
    let uniform = prop_oneof![3 => Just(false), 1 => Just(true)];
    let result = runner().run(&(lens, uniform, scores(), any::<u64>()), |(lens, uniform, scores, seed)| {
        // Equal lengths: every sequence the first one's, none empty.
        let lens = if uniform { vec![(lens[0].0.max(1), lens[0].1.max(1)); lens.len()] } else { lens };
        let (cu_q, cu_k) =
            (prefix_sums(lens.iter().map(|l| l.0 as usize)), prefix_sums(lens.iter().map(|l| l.1 as usize)));
        let (total_q, total_k) = (*cu_q.last().unwrap() as usize, *cu_k.last().unwrap() as usize);
        prop_assume!(total_q > 0 && total_k > 0);
        let max = [0, 1].map(|i| lens.iter().map(|l| if i == 0 { l.0 } else { l.1 }).max().unwrap().max(1));
        let (hq, hkv) = (4, 2);
        let (q, k, v) = random_problem([1, hq, total_q, d], [1, hkv, total_k, d], seed);
        let scale = softmax_scale(d);
        let tensors = Inputs { q: &q, k: &k, v: &v, causal: scores.causal, softmax_scale: scale };
        let starts = if uniform {
            SequenceStarts::Uniform { batch: lens.len() as u32 }
        } else {
            SequenceStarts::PrefixSums { cu_q: &cu_q, cu_k: &cu_k }
        };
        let x = PackedInputs { tensors, starts, max_seqlen: max };
        let (out, writes) = emulate_packed_scored(kernel, &x, scores.emulated());
        prop_assert!(writes.iter().all(|&w| w == 1), "{}: rows written {writes:?}", kernel.entry);
        for (b, &(lq, lk)) in lens.iter().enumerate() {
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
                let expected = attention_scored_f64(&qb, &kb, &vb, &scores.rule(), scale as f64);
                let (rel_l2, max_rel) = tolerance(kernel, TOLERANCES);
                judge(&got, &expected, rel_l2, max_rel).1
            };
            prop_assert!(passed, "{} sequence {b} ({lq}, {lk}) of {lens:?} {scores:?}", kernel.entry);
        }
        Ok(())
    });
    if let Err(e) = result {
        panic!("{}: {e}", kernel.entry);
    }
}

/// The kernels with packed score twins (the f16 ones: a bf16 twin's
/// schedule is the same).
fn kernels() -> Vec<&'static KernelInfo> {
    let packed = |k: &&KernelInfo| k.scores.is_some_and(|t| t.packed_softcap.is_some()) && k.output == OutputDtype::F16;
    let kernels: Vec<_> = KERNELS.iter().filter(packed).collect();
    assert_eq!(kernels.len(), 4, "the score twins of wgmma and wgmma-fp8pv at D = 64 and 128");
    kernels
}

fn fuzz_decode(kernel: &KernelInfo) {
    let d = kernel.tiles.head_dim as usize;
    let keys = prop_oneof![Just(1u32), 31u32..34, 63u32..66, 1u32..3000];
    let heads = prop_oneof![Just((4usize, 1usize)), Just((8, 2)), Just((2, 2))];
    let cases = (1u32..=16, keys, heads, 1usize..3, scores(), any::<u64>());
    let result = runner().run(&cases, |(sq, skv, (hq, hkv), batch, scores, seed)| {
        let (q, k, v) = random_problem([batch, hq, sq as usize, d], [batch, hkv, skv as usize, d], seed);
        let scale = softmax_scale(d);
        let x = Inputs { q: &q, k: &k, v: &v, causal: scores.causal, softmax_scale: scale };
        let got: Vec<f32> =
            emulate_scored(kernel, &x, scores.emulated()).into_iter().map(|x| f16::from_f32(x).to_f32()).collect();
        let expected = attention_scored_f64(&q, &k, &v, &scores.rule(), scale as f64);
        let (stats, passed) = judge(&got, &expected, TOLERANCES.0, TOLERANCES.1);
        prop_assert!(passed, "{} ({batch}, {sq}, {skv}, {hq}:{hkv}) {scores:?}: {stats:?}", kernel.entry);
        Ok(())
    });
    if let Err(e) = result {
        panic!("{}: {e}", kernel.entry);
    }
}

#[test]
fn decode_windows_and_softcaps_match_the_reference_over_its_key_splits() {
    let decode: Vec<_> =
        KERNELS.iter().filter(|k| k.variant == Variant::Decode && k.output == OutputDtype::F16).collect();
    assert!(decode.iter().all(|k| k.scores.is_some_and(|t| t.softcap.is_some())), "decode: windows and softcaps");
    for kernel in decode {
        fuzz_decode(kernel);
    }
}

#[test]
fn windowed_and_capped_schedules_match_the_reference_on_window_edges() {
    for kernel in kernels() {
        fuzz_dense(kernel);
    }
}

#[test]
fn packed_windowed_and_capped_schedules_match_the_reference_per_sequence() {
    for kernel in kernels() {
        fuzz_packed(kernel);
    }
}

/// A row whose window holds no key (its position plus `right` before key
/// 0) is all zeros, as the kernels write it, and the reference agrees.
#[test]
fn rows_whose_window_holds_no_key_are_zero() {
    let kernel = kernels()[0];
    let d = kernel.tiles.head_dim as usize;
    // Sq = 200 > Skv = 70: rows below 130 sit before key 0; with right = 1
    // rows up to 128 see nothing.
    let (q, k, v) = random_problem([1, 2, 200, d], [1, 1, 70, d], 7);
    let scores = Scores { left: Some(3), right: Some(1), causal: false, softcap: Some(5.0) };
    let x = Inputs { q: &q, k: &k, v: &v, causal: false, softmax_scale: softmax_scale(d) };
    let got = emulate_scored(kernel, &x, scores.emulated());
    let expected = attention_scored_f64(&q, &k, &v, &scores.rule(), softmax_scale(d) as f64);
    for h in 0..2 {
        for row in 0..200 {
            let at = (h * 200 + row) * d;
            let empty = row + 1 + 70 < 200;
            assert_eq!(got[at..at + d].iter().all(|&x| x == 0.0), empty, "head {h} row {row}");
            assert_eq!(expected[at..at + d].iter().all(|&x| x == 0.0), empty, "reference, head {h} row {row}");
        }
    }
}

/// The plan for Q `[1, 8, sq, d]` and K, V `[1, 8, skv, d]` with `opts` on
/// an sm_90a target (or not).
fn plan(d: usize, (sq, skv): (usize, usize), opts: &Options, sm90a: bool) -> Result<Plan, AttnError> {
    let problem = Problem::new([1, 8, sq, d], [1, 8, skv, d], [1, 8, skv, d], opts)?;
    Plan::new(problem, opts.variant, Target { sm90a, multiprocessors: 132 })
}

#[test]
fn plans_run_windows_and_softcaps_on_the_score_twins_and_refuse_the_rest() {
    let window = Options::new().window(Some(64), Some(0));
    // The twins, as each variant and output asks.
    let p = plan(64, (512, 512), &window.variant(Variant::Wgmma), true).expect("wgmma window");
    assert_eq!(p.entry(), "sdpa_wgmma_window_d64");
    let capped = Options::new().softcap(30.0).variant(Variant::WgmmaFp8Pv).output(OutputDtype::Bf16);
    let p = plan(128, (64, 16384), &capped, true).expect("fp8pv softcap");
    assert_eq!(p.entry(), "sdpa_wgmma_fp8pv_softcap_d128_bf16", "the 64-key twin, not the 192-key kernel");
    // The recommendation picks a variant that has them.
    for shape in [(1, 4096), (2048, 2048), (16, 300)] {
        let p = plan(128, shape, &window, true).expect("auto window");
        assert!(p.entry().contains("_window_"), "{shape:?}: {}", p.entry());
    }
    // Where the recommendation is `split-n64` (short rows), its twins.
    let p = plan(64, (256, 256), &window, true).expect("auto window, short rows");
    assert_eq!(p.entry(), "sdpa_split_n64_window_d64");
    // Where it is `split-wg`, which has none, `wgmma`'s.
    let p = plan(64, (4096, 256), &window, true).expect("auto window, split-wg's shape");
    assert_eq!(p.entry(), "sdpa_wgmma_window_d64");
    // Without a window or a softcap, the kernels as before.
    let p = plan(64, (512, 512), &Options::new().variant(Variant::Wgmma), true).expect("plain");
    assert_eq!(p.entry(), p.kernel().entry);
    // A full window under causal masking is causal masking: no twin.
    let p = plan(64, (512, 512), &Options::new().causal(true).window(None, None), true).expect("causal");
    assert_eq!(p.kernel().entry_for(false, kernels_gpu::kernels::ScoreForm::Plain), Some(p.entry()));
    // `split` runs both, off Hopper too.
    let p = plan(64, (16, 512), &window.variant(Variant::Split), false).expect("split window");
    assert_eq!(p.entry(), "sdpa_split_window_d64");
    let capped = Options::new().softcap(5.0).variant(Variant::Split).output(OutputDtype::Bf16);
    let p = plan(128, (300, 300), &capped, true).expect("split softcap");
    assert_eq!(p.entry(), "sdpa_split_softcap_d128_bf16");
    // So does `mma`.
    let p = plan(128, (2048, 2048), &window.variant(Variant::Mma), false).expect("mma window");
    assert_eq!(p.entry(), "sdpa_mma_window_d128");
    // A variant without score twins refuses, with a typed error.
    for opts in [window.variant(Variant::SplitWg), Options::new().softcap(5.0).variant(Variant::SplitWg)] {
        let refused = plan(64, (16, 512), &opts, true);
        assert!(matches!(refused, Err(AttnError::UnsupportedScores { .. })), "{refused:?}");
    }
    // `decode` runs both, off Hopper too.
    let p = plan(128, (1, 8192), &window.variant(Variant::Decode), false).expect("decode window");
    assert_eq!(p.entry(), "sdpa_decode_window_d128");
    let p = plan(64, (4, 8192), &Options::new().softcap(5.0).variant(Variant::Decode), false).expect("decode softcap");
    assert_eq!(p.entry(), "sdpa_decode_softcap_d64");
    // The recommendation for decoding takes `decode`'s twin.
    let p = plan(128, (1, 8192), &Options::new().softcap(5.0), true).expect("auto softcap");
    assert_eq!(p.entry(), "sdpa_decode_softcap_d128");
    // So does a kernel asked for by name.
    let p = plan(64, (512, 512), &window.variant(Variant::Wgmma), true).expect("plan");
    let wg = KERNELS.iter().find(|k| k.variant == Variant::SplitWg && k.tiles.head_dim == 64).unwrap();
    assert!(matches!(p.with_kernel(wg), Err(AttnError::UnsupportedScores { .. })));
    // Off Hopper the recommendation's own twins run prefill windows.
    for shape in [(512, 512), (4096, 4096)] {
        let p = plan(64, shape, &window, false).expect("auto window off Hopper");
        assert!(["sdpa_split_window_d64", "sdpa_mma_window_d64"].contains(&p.entry()), "{shape:?}: {}", p.entry());
    }
    // Caps the kernels cannot take.
    for cap in [0.0, -1.0, f32::NAN, f32::INFINITY] {
        let refused = plan(64, (64, 64), &Options::new().softcap(cap), true);
        assert!(matches!(refused, Err(AttnError::InvalidScale { .. })), "{cap}: {refused:?}");
    }
    let refused = plan(64, (64, 64), &Options::new().softcap(1e9), true);
    assert!(matches!(refused, Err(AttnError::ScaleOutOfRange { .. })), "{refused:?}");
}
