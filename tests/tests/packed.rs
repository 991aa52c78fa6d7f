//! Packed variable-length batches (`Attention::plan_packed` /
//! `run_packed`) on the GPU: every sequence against the f64 reference of
//! its own rows, the log-sum-exp against f64, lengths on and around the
//! tile edges (0, 1, 63, 64, 65, 128 + 1, ...), queries and keys of
//! different lengths (bottom-right causal per sequence), GQA; then prefix
//! sums no host checked (decreasing, past the totals) run without a fault
//! and leave the well-formed sequences right.

use sdpa::cudarc::driver::{CudaContext, CudaStream};
use sdpa::device::{DeviceScales, Fp8View, OutputViewMut, PackedSeqs, RunExtras, ScaleLayout};
use sdpa::metrics::{Tolerance, compare};
use sdpa::quant::random_problem;
use sdpa::reference::{attention_f64, log_sum_exp_f64};
use sdpa::{Attention, AttnError, Fp8Tensor, ImageChoice, Options, OutputDtype, Variant};
use sdpa_tests::packing::{PackedOutput, prefix_sums, rows_of, run_packed};
use std::sync::Arc;

/// An `Attention` on a stream of the test's own.
fn on_own_stream() -> (Arc<CudaStream>, Attention) {
    let ctx = CudaContext::new(0).expect("a GPU for the GPU tests");
    let stream = ctx.new_stream().expect("stream");
    let attn = Attention::on_stream(stream.clone(), ImageChoice::Auto).expect("on_stream");
    (stream, attn)
}

/// Checks sequence `b` (query rows `cu_q[b] ..`, key rows `cu_k[b] ..`) of
/// a packed run against the f64 reference, O and log-sum-exp.
fn check_sequence(
    out: &PackedOutput,
    (q, k, v): (&Fp8Tensor, &Fp8Tensor, &Fp8Tensor),
    ([q0, q1], [k0, k1]): ([usize; 2], [usize; 2]),
    causal: bool,
    (scale, tolerance): (f64, Tolerance),
    what: &str,
) {
    let ([_, hq, _, d], (sq, skv)) = (q.shape, (q1 - q0, k1 - k0));
    if sq == 0 {
        return;
    }
    let (qb, kb, vb) = (rows_of(q, q0, sq), rows_of(k, k0, skv), rows_of(v, k0, skv));
    let want = if skv == 0 { vec![0.0; hq * sq * d] } else { attention_f64(&qb, &kb, &vb, causal, scale) };
    // The run's rows of this sequence, as `[Hq, Sq, D]` like the reference.
    let got: Vec<f32> = (0..hq)
        .flat_map(|h| (0..sq).flat_map(move |i| (0..d).map(move |c| ((q0 + i) * hq + h) * d + c)))
        .map(|at| out.o[at])
        .collect();
    let stats = compare(&got, &want, tolerance.max_abs);
    let zeros_exact = skv > 0 || got.iter().all(|&x| x == 0.0);
    assert!(tolerance.passes(&stats) && zeros_exact, "{what}: {stats}");
    for h in 0..hq {
        for i in 0..sq {
            let got = out.lse[(q0 + i) * hq + h] as f64;
            let want = if skv == 0 { f64::NEG_INFINITY } else { log_sum_exp_f64(&qb, &kb, h, i, causal, scale) };
            let close = if want.is_finite() { (got - want).abs() <= 1e-3 * want.abs().max(1.0) } else { got == want };
            assert!(close, "{what}: row ({h}, {i}) log-sum-exp {got} vs {want}");
        }
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU with the sm_90a image (Hopper); run on a GPU machine (README: GPU tests)"]
fn packed_sequences_match_the_f64_reference_on_tile_edges() {
    let (stream, attn) = on_own_stream();
    // Query and key lengths per sequence: empty, one row, around the 64-key
    // tile and the 128/192-row blocks, and keys longer or shorter than the
    // queries (causal aligns each sequence's last query with its last key).
    let lens_q = [0usize, 1, 63, 64, 65, 129, 200, 3, 192, 70];
    let lens_k = [5usize, 1, 63, 64, 65, 129, 300, 0, 191, 40];
    let (cu_q, cu_k) = (prefix_sums(lens_q), prefix_sums(lens_k));
    let (total_q, total_k) = (lens_q.iter().sum::<usize>(), lens_k.iter().sum::<usize>());
    let max = [*lens_q.iter().max().unwrap(), *lens_k.iter().max().unwrap()];
    for (variant, d, causal, hq, hkv, output) in [
        (Variant::Wgmma, 128, true, 8, 2, OutputDtype::F16),
        (Variant::Wgmma, 64, false, 4, 4, OutputDtype::Bf16),
        (Variant::Wgmma, 64, true, 6, 2, OutputDtype::F16),
        (Variant::WgmmaFp8Pv, 128, false, 4, 1, OutputDtype::F16),
        (Variant::WgmmaFp8Pv, 64, true, 4, 2, OutputDtype::F16),
    ] {
        let (q, k, v) = random_problem([1, hq, total_q, d], [1, hkv, total_k, d], 43 + d as u64);
        let opts = Options::new().causal(causal).variant(variant).output(output);
        let out = run_packed(&stream, &attn, (&q, &k, &v), (&cu_q, &cu_k), max, &opts).expect("run_packed");
        let scale = 1.0 / (d as f64).sqrt();
        for b in 0..lens_q.len() {
            let rows = ([cu_q[b], cu_q[b + 1]].map(|x| x as usize), [cu_k[b], cu_k[b + 1]].map(|x| x as usize));
            let what = format!(
                "{} D={d} causal={causal} {hq}:{hkv} sequence {b} ({}, {})",
                variant.name(),
                lens_q[b],
                lens_k[b]
            );
            check_sequence(&out, (&q, &k, &v), rows, causal, (scale, Tolerance::of(variant)), &what);
        }
        println!(
            "{} D={d} causal={causal} Hq:Hkv {hq}:{hkv} {}: {} sequences ok",
            variant.name(),
            output.name(),
            lens_q.len()
        );
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU with the sm_90a image (Hopper); run on a GPU machine (README: GPU tests)"]
fn hostile_prefix_sums_run_without_a_fault() {
    let (stream, attn) = on_own_stream();
    let d = 128;
    let lens = [100usize, 64, 100];
    let total = lens.iter().sum::<usize>();
    let (q, k, v) = random_problem([1, 2, total, d], [1, 2, total, d], 5);
    let good = prefix_sums(lens);
    // Sequence 1's keys run backwards; sequence 2's end past the totals.
    let hostile_k = [0, 100, 50, i32::MAX];
    let hostile_q = [0, 100, 164, -7];
    let opts = Options::new().variant(Variant::Wgmma);
    let out = run_packed(&stream, &attn, (&q, &k, &v), (&hostile_q, &hostile_k), [100, 100], &opts)
        .expect("hostile prefix sums are data, not a launch error");
    // Sequence 0 is well-formed: still right.
    let scale = 1.0 / (d as f64).sqrt();
    check_sequence(
        &out,
        (&q, &k, &v),
        ([0, 100], [0, 100]),
        false,
        (scale, Tolerance::of(Variant::Wgmma)),
        "sequence 0",
    );
    // And the library is still usable: a well-formed run after it.
    let again = run_packed(&stream, &attn, (&q, &k, &v), (&good, &good), [100, 100], &opts).expect("run after");
    check_sequence(
        &again,
        (&q, &k, &v),
        ([164, 264], [164, 264]),
        false,
        (scale, Tolerance::of(Variant::Wgmma)),
        "after",
    );
    println!("hostile prefix sums: no fault, sequence 0 right, a later run right");
}

#[test]
#[ignore = "needs an NVIDIA GPU with the sm_90a image (Hopper); run on a GPU machine (README: GPU tests)"]
fn packed_mistakes_are_typed_errors() {
    let (stream, attn) = on_own_stream();
    let cu = stream.clone_htod(&[0i32, 10, 20]).expect("cu");
    let one = stream.clone_htod(&[0i32]).expect("cu");
    assert!(matches!(PackedSeqs::new(one.as_view(), one.as_view(), 10, 10), Err(AttnError::ShapeMismatch(_))));
    let seqs = PackedSeqs::new(cu.as_view(), cu.as_view(), 10, 10).expect("seqs");
    let split = Options::new().variant(Variant::Split);
    let refused = attn.plan_packed([20, 4, 64], [20, 4, 64], [20, 4, 64], &seqs, &split);
    assert!(matches!(refused, Err(AttnError::VariantUnavailable { .. })), "{refused:?}");
    let plan = attn.plan_packed([20, 4, 64], [20, 4, 64], [20, 4, 64], &seqs, &Options::new()).expect("plan");
    assert_eq!(plan.variant(), Variant::Wgmma);
    let dense = attn.plan_shapes([2, 4, 10, 64], [2, 4, 10, 64], [2, 4, 10, 64], &Options::new()).expect("dense");
    let codes = stream.alloc_zeros::<u8>(20 * 4 * 64).expect("codes");
    let mut o = stream.alloc_zeros::<u16>(20 * 4 * 64).expect("o");
    let scales = stream.clone_htod(&[1.0f32; 4]).expect("scales");
    let view = || Fp8View::packed(codes.as_view(), [20, 4, 64]).expect("view");
    let mut ws = attn.workspace(&plan).expect("ws");
    let ds = DeviceScales::new(scales.as_view(), scales.as_view(), scales.as_view(), ScaleLayout::PerHead);
    let mut out = OutputViewMut::packed(o.as_view_mut(), OutputDtype::F16, [20, 4, 64]).expect("out");
    let not_packed =
        attn.run_packed(&dense, &view(), &view(), &view(), &seqs, &ds, &mut out, &mut ws, RunExtras::new());
    assert!(matches!(not_packed, Err(AttnError::NotPlanned(_))), "{not_packed:?}");
    let mut short_lse = stream.alloc_zeros::<f32>(7).expect("lse");
    let extras = RunExtras::new().lse(short_lse.as_view_mut());
    let short = attn.run_packed(&plan, &view(), &view(), &view(), &seqs, &ds, &mut out, &mut ws, extras);
    assert!(matches!(short, Err(AttnError::BufferLength { .. })), "{short:?}");
    println!("packed mistakes: typed errors");
}
