//! Sliding windows and softcaps on the GPU (`Options::window`,
//! `Options::softcap`: the score twins of the `wgmma` kernels, `split`,
//! `split-n64`, `mma` and `decode`): O and the log-sum-exp of fresh random
//! inputs against the f64 reference
//! (`sdpa::reference::attention_scored_f64`), O and the log-sum-exp
//! poisoned with NaN before each run, over window edges (left/right 0, 1,
//! the 64-key tile +- 1, windows that leave a row no key), with causal
//! masking, GQA, both output types, dense and packed; and every prefill
//! variant's log-sum-exp without a window or a cap.

use sdpa::cudarc::driver::CudaStream;
use sdpa::device::{DeviceScales, Fp8View, OutputViewMut, PackedSeqs, RunExtras, ScaleLayout};
use sdpa::metrics::{Tolerance, compare};
use sdpa::quant::random_problem;
use sdpa::reference::{attention_scored_f64, log_sum_exp_scored_f64};
use sdpa::tensor::to_f32;
use sdpa::{Attention, AttnError, Fp8Tensor, Options, OutputDtype, Variant};
use sdpa_tests::lse::{self, score_error_bound};
use sdpa_tests::on_own_stream;
use sdpa_tests::packing::{packed_codes, packed_rows, prefix_sums, rows_of};
use sdpa_tests::pv_bound::{judge_within_bounds, reference_with_pv_bound_scored};
use sdpa_tests::scores::Scores;
use sdpa_tests::views::run_with_lse;
use std::sync::Arc;

/// The windows and caps every configuration runs.
const CASES: [Scores; 9] = [
    Scores { left: Some(0), right: Some(0), causal: false, softcap: None },
    Scores { left: Some(1), right: Some(1), causal: false, softcap: None },
    Scores { left: Some(63), right: Some(65), causal: false, softcap: None },
    Scores { left: Some(64), right: None, causal: true, softcap: None },
    Scores { left: Some(129), right: Some(0), causal: false, softcap: Some(5.0) },
    Scores { left: None, right: None, causal: false, softcap: Some(30.0) },
    Scores { left: None, right: None, causal: true, softcap: Some(1.0) },
    Scores { left: Some(3), right: Some(1), causal: false, softcap: None },
    Scores { left: None, right: Some(200), causal: false, softcap: Some(8.0) },
];

/// Checks O `[1, Hq, Sq, D]` of `variant` (written as `output`) and the
/// log-sum-exp `[1, Hq, Sq]` of `q`, `k`, `v` under `scores` against the
/// f64 reference: O within the gate's tolerance, or for a lower-precision
/// variant within the per-element E4M3 P·V bound with the scores' error
/// slack (`pv_bound::reference_with_pv_bound_scored`: rows that see two or
/// three keys average no rounding away).
fn check(
    (o, lse): (&[f32], &[f32]),
    (q, k, v): (&Fp8Tensor, &Fp8Tensor, &Fp8Tensor),
    scores: &Scores,
    (scale, variant, output): (f64, Variant, OutputDtype),
    what: &str,
) {
    let [_, hq, sq, _] = q.shape;
    let rule = scores.rule();
    if variant.lower_precision() {
        let reference = reference_with_pv_bound_scored(q, k, v, &rule, scale, true);
        let judged = judge_within_bounds(o, &reference, output);
        assert!(judged.passed, "{what}: {judged}");
    } else {
        let want = attention_scored_f64(q, k, v, &rule, scale);
        let stats = compare(o, &want, Tolerance::of(variant).max_abs);
        // Rows that see no key are exact zeros.
        let zeros_exact = want.iter().zip(o).all(|(w, g)| *w != 0.0 || *g == 0.0 || w.is_nan());
        assert!(Tolerance::of(variant).passes(&stats) && zeros_exact, "{what}: {stats}");
    }
    for h in 0..hq {
        for i in 0..sq {
            let got = lse[h * sq + i] as f64;
            let want = log_sum_exp_scored_f64(q, k, (h, i), &rule, scale);
            let close = lse::close(got, want, score_error_bound(q, k, (0, h, i), &rule, scale));
            assert!(close, "{what}: row ({h}, {i}) log-sum-exp {got} vs {want}");
        }
    }
}

/// Runs `q`, `k`, `v` (one batch) with `opts` on an output and a
/// log-sum-exp poisoned with NaN; returns O's values and the log-sum-exp.
fn run_dense(
    stream: &Arc<CudaStream>,
    attn: &Attention,
    inputs: (&Fp8Tensor, &Fp8Tensor, &Fp8Tensor),
    opts: &Options,
) -> Result<(Vec<f32>, Vec<f32>), AttnError> {
    let out = run_with_lse(stream, attn, inputs, opts)?;
    Ok((out.o_bits.iter().map(|&x| to_f32(opts.output, x)).collect(), out.lse))
}

/// A softmax scale that makes scores large enough for a cap to matter.
fn scale_of(d: usize) -> f32 {
    4.0 / (d as f32).sqrt()
}

/// Runs every window and cap of [`CASES`] on each `(variant, D, Hq, Hkv,
/// output)` of `configs`, over queries and keys on and around the tiles,
/// and checks each run ([`check`]); `seed` the first inputs' seed.
fn windows_match(configs: &[(Variant, usize, usize, usize, OutputDtype)], cases: &[Scores], mut seed: u64) {
    let (stream, attn) = on_own_stream();
    for &(variant, d, hq, hkv, output) in configs {
        // Queries and keys on and around the tiles (32/64 keys, 32-192
        // rows), more queries than keys (rows before key 0), and more keys.
        for (sq, skv) in [(200usize, 200usize), (193, 70), (65, 300), (1, 129)] {
            for scores in cases {
                seed += 1;
                let (q, k, v) = random_problem([1, hq, sq, d], [1, hkv, skv, d], seed);
                let scale = scale_of(d);
                let opts = scores.apply(Options::new().variant(variant).output(output).scale(scale));
                let (o, lse) = run_dense(&stream, &attn, (&q, &k, &v), &opts).expect("run");
                let what = format!("{} D={d} {hq}:{hkv} {} ({sq}, {skv}) {scores:?}", variant.name(), output.name());
                check((&o, &lse), (&q, &k, &v), scores, (scale as f64, variant, output), &what);
            }
        }
        println!("{} D={d} {}: {} windows x 4 shapes ok", variant.name(), output.name(), cases.len());
    }
}

#[test]
#[ignore = "needs a GPU: an NVIDIA GPU with the sm_90a image (Hopper); run on a GPU machine (README: GPU tests)"]
fn windows_and_softcaps_match_the_f64_reference() {
    windows_match(
        &[
            (Variant::Wgmma, 64, 4, 2, OutputDtype::F16),
            (Variant::Wgmma, 128, 4, 1, OutputDtype::Bf16),
            (Variant::WgmmaFp8Pv, 64, 2, 2, OutputDtype::Bf16),
            (Variant::WgmmaFp8Pv, 128, 4, 2, OutputDtype::F16),
            (Variant::SplitN64, 64, 4, 2, OutputDtype::F16),
            (Variant::SplitN64, 128, 2, 2, OutputDtype::Bf16),
        ],
        &CASES,
        1000,
    );
}

#[test]
#[ignore = "needs a GPU: any the library runs on (split and mma are built for sm_89 and sm_90a); run on a GPU machine (README: GPU tests)"]
fn split_and_mma_windows_and_softcaps_match_the_f64_reference() {
    windows_match(
        &[
            (Variant::Split, 64, 4, 2, OutputDtype::Bf16),
            (Variant::Split, 128, 2, 1, OutputDtype::F16),
            (Variant::Mma, 64, 2, 1, OutputDtype::F16),
            (Variant::Mma, 128, 4, 2, OutputDtype::Bf16),
        ],
        &CASES,
        3000,
    );
}

/// Without a window or a cap (the plain kernels), causal or not.
const PLAIN: [Scores; 2] = [
    Scores { left: None, right: None, causal: false, softcap: None },
    Scores { left: None, right: None, causal: true, softcap: None },
];

#[test]
#[ignore = "needs a GPU: any the library runs on (the variants of the loaded image); run on a GPU machine (README: GPU tests)"]
fn every_prefill_variant_writes_the_log_sum_exp_of_its_plain_scores() {
    let (_, attn) = on_own_stream();
    let available = attn.variants();
    let configs: Vec<_> = [
        (Variant::Split, 64, 4, 2, OutputDtype::F16),
        (Variant::Split, 128, 2, 2, OutputDtype::Bf16),
        (Variant::SplitWg, 64, 2, 1, OutputDtype::Bf16),
        (Variant::SplitWg, 128, 4, 2, OutputDtype::F16),
        (Variant::SplitN64, 64, 4, 4, OutputDtype::Bf16),
        (Variant::SplitN64, 128, 2, 1, OutputDtype::F16),
        (Variant::Mma, 64, 2, 2, OutputDtype::Bf16),
        (Variant::Mma, 128, 4, 1, OutputDtype::F16),
        (Variant::Wgmma, 64, 4, 2, OutputDtype::F16),
        (Variant::WgmmaFp8Pv, 128, 2, 2, OutputDtype::Bf16),
    ]
    .into_iter()
    .filter(|c| available.contains(&c.0))
    .collect();
    windows_match(&configs, &PLAIN, 7000);
}

#[test]
#[ignore = "needs a GPU: an NVIDIA GPU with the sm_90a image (Hopper); run on a GPU machine (README: GPU tests)"]
fn packed_windows_and_softcaps_match_the_f64_reference_per_sequence() {
    let (stream, attn) = on_own_stream();
    let lens_q = [0usize, 1, 63, 65, 129, 200, 3, 192];
    let lens_k = [5usize, 1, 64, 65, 129, 300, 0, 70];
    let (cu_q, cu_k) = (prefix_sums(lens_q), prefix_sums(lens_k));
    let (total_q, total_k) = (lens_q.iter().sum::<usize>(), lens_k.iter().sum::<usize>());
    let max = [*lens_q.iter().max().unwrap(), *lens_k.iter().max().unwrap()];
    for (variant, d, hq, hkv, output) in [
        (Variant::Wgmma, 64, 4, 2, OutputDtype::F16),
        (Variant::Wgmma, 128, 4, 2, OutputDtype::Bf16),
        (Variant::WgmmaFp8Pv, 64, 4, 1, OutputDtype::F16),
        (Variant::WgmmaFp8Pv, 128, 2, 2, OutputDtype::F16),
    ] {
        for (n, scores) in CASES.iter().enumerate() {
            let (q, k, v) = random_problem([1, hq, total_q, d], [1, hkv, total_k, d], 77 + n as u64 + d as u64);
            let scale = scale_of(d);
            let opts = scores.apply(Options::new().variant(variant).output(output).scale(scale));
            let (q_shape, kv_shape) = ([total_q, hq, d], [total_k, hkv, d]);
            let [qd, kd, vd] = [&q, &k, &v].map(|t| stream.clone_htod(&packed_codes(t)).expect("codes"));
            let [cu_qd, cu_kd] = [&cu_q, &cu_k].map(|c| stream.clone_htod(c).expect("prefix sums"));
            let seqs = PackedSeqs::new(cu_qd.as_view(), cu_kd.as_view(), max[0], max[1]).expect("seqs");
            let plan = attn.plan_packed(q_shape, kv_shape, kv_shape, &seqs, &opts).expect("plan");
            let mut ws = attn.workspace(&plan).expect("workspace");
            let [qs, ks, vs] = [&q.scales, &k.scales, &v.scales].map(|s| stream.clone_htod(s).expect("scales"));
            let mut o = stream.clone_htod(&vec![0x7FFFu16; total_q * hq * d]).expect("o");
            let mut lse = stream.clone_htod(&vec![f32::NAN; total_q * hq]).expect("lse");
            attn.run_packed(
                &plan,
                &Fp8View::packed(qd.as_view(), q_shape).expect("q"),
                &Fp8View::packed(kd.as_view(), kv_shape).expect("k"),
                &Fp8View::packed(vd.as_view(), kv_shape).expect("v"),
                &seqs,
                &DeviceScales::new(qs.as_view(), ks.as_view(), vs.as_view(), ScaleLayout::PerHead),
                &mut OutputViewMut::packed(o.as_view_mut(), output, q_shape).expect("o view"),
                &mut ws,
                RunExtras::new().lse(lse.as_view_mut()),
            )
            .expect("run_packed");
            let bits = stream.clone_dtoh(&o).expect("o back");
            let lse = stream.clone_dtoh(&lse).expect("lse back");
            stream.synchronize().expect("sync");
            let o: Vec<f32> = bits.iter().map(|&x| to_f32(output, x)).collect();
            for b in 0..lens_q.len() {
                let (q0, k0, sq, skv) = (cu_q[b] as usize, cu_k[b] as usize, lens_q[b], lens_k[b]);
                if sq == 0 {
                    continue;
                }
                // The sequence's rows as `[Hq, Sq, D]` and `[Hq, Sq]`, like the reference.
                let (got_o, got_lse) = (packed_rows(&o, [hq, d], q0, sq), packed_rows(&lse, [hq, 1], q0, sq));
                let what = format!("{} D={d} sequence {b} ({sq}, {skv}) {scores:?}", variant.name());
                if skv == 0 {
                    let empty = got_o.iter().all(|&x| x == 0.0) && got_lse.iter().all(|&x| x == f32::NEG_INFINITY);
                    assert!(empty, "{what}: a sequence without keys is zeros and -inf");
                    continue;
                }
                let (qb, kb, vb) = (rows_of(&q, q0, sq), rows_of(&k, k0, skv), rows_of(&v, k0, skv));
                let judged_as = (scale as f64, variant, output);
                check((&got_o, &got_lse), (&qb, &kb, &vb), scores, judged_as, &what);
            }
        }
        println!(
            "{} D={d} {} packed: {} windows x {} sequences ok",
            variant.name(),
            output.name(),
            CASES.len(),
            lens_q.len()
        );
    }
}

#[test]
#[ignore = "needs a GPU: an NVIDIA GPU with the sm_90a image (Hopper); run on a GPU machine (README: GPU tests)"]
fn the_recommendation_runs_windows_on_a_variant_that_has_them() {
    let (stream, attn) = on_own_stream();
    // A shape whose recommendation (without a window) is `split-n64`: the
    // plan takes its twin.
    let (q, k, v) = random_problem([1, 8, 256, 64], [1, 8, 256, 64], 3);
    let scores = Scores { left: Some(100), right: Some(0), causal: false, softcap: Some(20.0) };
    let opts = Options::new().window(scores.left, scores.right).softcap(20.0).scale(scale_of(64));
    let plan = attn.plan_shapes(q.shape, k.shape, v.shape, &opts).expect("plan");
    assert!(plan.kernel().scores.is_some(), "{}", plan.kernel().entry);
    let (o, lse) = run_dense(&stream, &attn, (&q, &k, &v), &opts).expect("run");
    let judged_as = (scale_of(64) as f64, plan.variant(), OutputDtype::F16);
    check((&o, &lse), (&q, &k, &v), &scores, judged_as, plan.entry());
    println!("auto with a window and a softcap: {} ok", plan.entry());
}

#[test]
#[ignore = "needs a GPU: any the library runs on (decode is built for sm_89 and sm_90a); run on a GPU machine (README: GPU tests)"]
fn decode_windows_and_softcaps_match_the_f64_reference_over_key_splits() {
    let (stream, attn) = on_own_stream();
    let mut seed = 5000;
    for (d, hq, hkv, output) in [(64, 8, 2, OutputDtype::F16), (128, 4, 4, OutputDtype::Bf16)] {
        // Few queries against long caches: the keys split across blocks,
        // windows that leave whole splits without a key.
        for (sq, skv) in [(1usize, 100usize), (4, 4096), (16, 3000), (1, 20000)] {
            for scores in &CASES {
                seed += 1;
                let (q, k, v) = random_problem([1, hq, sq, d], [1, hkv, skv, d], seed);
                let scale = scale_of(d);
                let opts = scores.apply(Options::new().variant(Variant::Decode).output(output).scale(scale));
                let (o, lse) = run_dense(&stream, &attn, (&q, &k, &v), &opts).expect("run");
                let what = format!("decode D={d} {hq}:{hkv} {} ({sq}, {skv}) {scores:?}", output.name());
                check((&o, &lse), (&q, &k, &v), scores, (scale as f64, Variant::Decode, output), &what);
            }
        }
        println!("decode D={d} {}: {} windows and caps x 4 shapes ok", output.name(), CASES.len());
    }
}
