//! `[B, S, H, D]` tensors (`Options::layout(Layout::Bshd)`, run by the
//! `wgmma` variants' packed twins as sequences of equal lengths without
//! prefix sums, and by `decode` itself where each sequence has one query
//! row) on the GPU: every batch entry and head against the f64
//! reference, the log-sum-exp (`[B, Sq, Hq]`) against f64, on and around
//! the tile edges, GQA, causal with more keys than queries; the same
//! inputs in `[B, H, S, D]` give the same bits, with windows and softcaps
//! too; and the mistakes a caller can make are typed errors.

use sdpa::cudarc::driver::{CudaContext, CudaStream};
use sdpa::device::{DeviceScales, Fp8View, OutputViewMut, RunExtras, ScaleLayout};
use sdpa::metrics::{Tolerance, compare};
use sdpa::quant::random_problem;
use sdpa::reference::{ScoreRule, attention_f64, attention_scored_f64, log_sum_exp_f64};
use sdpa::tensor::to_f32;
use sdpa::{Attention, AttnError, Fp8Tensor, ImageChoice, Layout, Options, OutputDtype, Variant};
use sdpa_tests::packing::{batch_of, bshd_codes, from_bshd};
use std::sync::Arc;

/// An `Attention` on a stream of the test's own.
fn on_own_stream() -> (Arc<CudaStream>, Attention) {
    let ctx = CudaContext::new(0).expect("a GPU for the GPU tests");
    let stream = ctx.new_stream().expect("stream");
    let attn = Attention::on_stream(stream.clone(), ImageChoice::Auto).expect("on_stream");
    (stream, attn)
}

/// What one run gave, in `[B, Hq, Sq, D]` order whatever the layout: O's
/// bits, and the log-sum-exp as the layout lays it out.
struct RunOutput {
    o_bits: Vec<u16>,
    lse: Vec<f32>,
}

/// Runs `q`, `k`, `v` (`[B, H, S, D]` tensors) laid out as `layout`, on an
/// output and log-sum-exp poisoned with NaN.
fn run(
    stream: &Arc<CudaStream>,
    attn: &Attention,
    (q, k, v): (&Fp8Tensor, &Fp8Tensor, &Fp8Tensor),
    opts: &Options,
) -> Result<RunOutput, AttnError> {
    let layout = opts.layout;
    let memory = |t: &Fp8Tensor| if layout == Layout::Bshd { bshd_codes(t) } else { t.data.clone() };
    let [qd, kd, vd] = [q, k, v].map(|t| stream.clone_htod(&memory(t)).expect("codes"));
    let plan = attn.plan_shapes(q.shape, k.shape, v.shape, opts)?;
    let mut ws = attn.workspace(&plan)?;
    let [qs, ks, vs] = [&q.scales, &k.scales, &v.scales].map(|s| stream.clone_htod(s).expect("scales"));
    let n = q.data.len();
    let mut o = stream.clone_htod(&vec![0x7FFFu16; n]).expect("o");
    let mut lse = stream.clone_htod(&vec![f32::NAN; n / q.shape[3]]).expect("lse");
    let view = |codes, t: &Fp8Tensor| match layout {
        Layout::Bshd => Fp8View::bshd(codes, layout.memory_order(t.shape)),
        _ => Fp8View::new(codes, t.shape),
    };
    let mut out = match layout {
        Layout::Bshd => OutputViewMut::bshd(o.as_view_mut(), opts.output, layout.memory_order(q.shape))?,
        _ => OutputViewMut::new(o.as_view_mut(), opts.output, q.shape)?,
    };
    attn.run_views_with(
        &plan,
        &view(qd.as_view(), q)?,
        &view(kd.as_view(), k)?,
        &view(vd.as_view(), v)?,
        &DeviceScales::new(qs.as_view(), ks.as_view(), vs.as_view(), ScaleLayout::PerHead),
        &mut out,
        &mut ws,
        RunExtras::new().lse(lse.as_view_mut()),
    )?;
    let bits = stream.clone_dtoh(&o).expect("o back");
    let lse = stream.clone_dtoh(&lse).expect("lse back");
    stream.synchronize().expect("sync");
    let o_bits = if layout == Layout::Bshd { from_bshd(&bits, q.shape) } else { bits };
    Ok(RunOutput { o_bits, lse })
}

#[test]
#[ignore = "needs an NVIDIA GPU with the sm_90a image (Hopper); run on a GPU machine (README: GPU tests)"]
fn bshd_matches_the_f64_reference_and_the_bhsd_bits_on_tile_edges() {
    let (stream, attn) = on_own_stream();
    // (variant, D, causal, B, Hq, Hkv, Sq, Skv, output): lengths on and
    // around the 64-key tile and the 128/192-row blocks, one query row,
    // more keys than queries and fewer.
    let cases = [
        (Variant::Wgmma, 128, true, 3, 8, 2, 200, 333, OutputDtype::F16),
        (Variant::Wgmma, 128, false, 2, 4, 4, 1, 65, OutputDtype::Bf16),
        (Variant::Wgmma, 64, false, 4, 4, 1, 129, 63, OutputDtype::F16),
        (Variant::Wgmma, 64, true, 2, 6, 2, 192, 192, OutputDtype::F16),
        (Variant::WgmmaFp8Pv, 128, false, 2, 4, 1, 300, 129, OutputDtype::F16),
        (Variant::WgmmaFp8Pv, 64, true, 3, 4, 2, 65, 500, OutputDtype::Bf16),
        // `decode` reads `[B, S, H, D]` caches itself (one query row).
        (Variant::Decode, 128, false, 2, 8, 2, 1, 3000, OutputDtype::F16),
        (Variant::Decode, 64, true, 3, 4, 1, 1, 777, OutputDtype::Bf16),
    ];
    for (variant, d, causal, b, hq, hkv, sq, skv, output) in cases {
        let (q, k, v) = random_problem([b, hq, sq, d], [b, hkv, skv, d], 91 + d as u64 + sq as u64);
        let what =
            format!("{} D={d} causal={causal} B={b} {hq}:{hkv} Sq={sq} Skv={skv} {}", variant.name(), output.name());
        let opts = Options::new().causal(causal).variant(variant).output(output);
        let bshd = run(&stream, &attn, (&q, &k, &v), &opts.layout(Layout::Bshd)).expect("bshd run");
        let bhsd = run(&stream, &attn, (&q, &k, &v), &opts).expect("bhsd run");
        let scale = 1.0 / (d as f64).sqrt();
        let got: Vec<f32> = bshd.o_bits.iter().map(|&x| to_f32(output, x)).collect();
        let per_batch = hq * sq * d;
        for batch in 0..b {
            let (qb, kb, vb) = (batch_of(&q, batch), batch_of(&k, batch), batch_of(&v, batch));
            let want = attention_f64(&qb, &kb, &vb, causal, scale);
            let stats = compare(&got[batch * per_batch..][..per_batch], &want, Tolerance::of(variant).max_abs);
            assert!(Tolerance::of(variant).passes(&stats), "{what}: batch {batch}: {stats}");
            for h in 0..hq {
                for i in 0..sq {
                    let got = bshd.lse[(batch * sq + i) * hq + h] as f64;
                    let want = log_sum_exp_f64(&qb, &kb, h, i, causal, scale);
                    let close =
                        if want.is_finite() { (got - want).abs() <= 1e-3 * want.abs().max(1.0) } else { got == want };
                    assert!(close, "{what}: batch {batch} row ({h}, {i}) log-sum-exp {got} vs {want}");
                }
            }
        }
        let differing = bshd.o_bits.iter().zip(&bhsd.o_bits).filter(|(a, b)| a != b).count();
        println!("{what}: matches f64; {differing} of {} elements differ from the [B, H, S, D] run", got.len());
        assert_eq!(differing, 0, "{what}: the same blocks' rows in another layout give other bits");
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU with the sm_90a image (Hopper); run on a GPU machine (README: GPU tests)"]
fn layout_mistakes_are_typed_errors() {
    let (stream, attn) = on_own_stream();
    let shape = [2, 4, 64, 64];
    let codes = stream.alloc_zeros::<u8>(shape.iter().product()).expect("codes");
    let mut o = stream.alloc_zeros::<u16>(shape.iter().product()).expect("o");
    let scales = stream.clone_htod(&[1.0f32; 4]).expect("scales");
    let scales = DeviceScales::new(scales.as_view(), scales.as_view(), scales.as_view(), ScaleLayout::PerHead);
    let bshd = Options::new().layout(Layout::Bshd);
    let plan = attn.plan_shapes(shape, shape, shape, &bshd).expect("plan");
    let mut ws = attn.workspace(&plan).expect("workspace");
    // `[B, H, S, D]` views handed to a `[B, S, H, D]` plan.
    let view = Fp8View::new(codes.as_view(), shape).expect("view");
    let mut out = OutputViewMut::new(o.as_view_mut(), OutputDtype::F16, shape).expect("out");
    let refused = attn.run_views(&plan, &view, &view, &view, &scales, &mut out, &mut ws);
    assert!(matches!(refused, Err(AttnError::NotPlanned(_))), "{refused:?}");
    // A variant that does not read the layout.
    let split = attn.plan_shapes(shape, shape, shape, &bshd.variant(Variant::Split));
    assert!(matches!(split, Err(AttnError::LayoutUnavailable { layout: "bshd", .. })), "{split:?}");
    // The right views run.
    let view = Fp8View::bshd(codes.as_view(), Layout::Bshd.memory_order(shape)).expect("view");
    let mut out =
        OutputViewMut::bshd(o.as_view_mut(), OutputDtype::F16, Layout::Bshd.memory_order(shape)).expect("out");
    attn.run_views(&plan, &view, &view, &view, &scales, &mut out, &mut ws).expect("the planned layout runs");
    stream.synchronize().expect("sync");
    println!("layout mistakes: typed errors; the planned layout runs");
}

#[test]
#[ignore = "needs an NVIDIA GPU with the sm_90a image (Hopper); run on a GPU machine (README: GPU tests)"]
fn bshd_windows_and_softcaps_match_the_f64_reference_and_the_bhsd_bits() {
    let (stream, attn) = on_own_stream();
    // (variant, D, causal, window (left, right), softcap): the packed score
    // twins on sequences of equal lengths.
    let cases = [
        (Variant::Wgmma, 64, true, (Some(100), Some(0)), None),
        (Variant::Wgmma, 128, false, (Some(64), Some(63)), Some(20.0)),
        (Variant::WgmmaFp8Pv, 64, false, (None, Some(1)), Some(5.0)),
        (Variant::WgmmaFp8Pv, 128, true, (Some(300), None), None),
    ];
    let (b, hq, hkv, sq, skv) = (3, 4, 2, 129, 300);
    for (variant, d, causal, (left, right), softcap) in cases {
        let (q, k, v) = random_problem([b, hq, sq, d], [b, hkv, skv, d], 7 + d as u64);
        let mut opts = Options::new().causal(causal).variant(variant).window(left, right);
        if let Some(cap) = softcap {
            opts = opts.softcap(cap);
        }
        let what = format!("{} D={d} causal={causal} window ({left:?}, {right:?}) softcap {softcap:?}", variant.name());
        let bshd = run(&stream, &attn, (&q, &k, &v), &opts.layout(Layout::Bshd)).expect("bshd run");
        let bhsd = run(&stream, &attn, (&q, &k, &v), &opts).expect("bhsd run");
        let got: Vec<f32> = bshd.o_bits.iter().map(|&x| to_f32(OutputDtype::F16, x)).collect();
        let rule = ScoreRule {
            causal,
            left: left.map(|n| n as usize),
            right: right.map(|n| n as usize),
            softcap: softcap.map(f64::from),
        };
        let want = attention_scored_f64(&q, &k, &v, &rule, 1.0 / (d as f64).sqrt());
        let stats = compare(&got, &want, Tolerance::of(variant).max_abs);
        assert!(Tolerance::of(variant).passes(&stats), "{what}: {stats}");
        let differing = bshd.o_bits.iter().zip(&bhsd.o_bits).filter(|(a, b)| a != b).count();
        println!("{what}: matches f64; {differing} elements differ from the [B, H, S, D] run");
        assert_eq!(differing, 0, "{what}: other bits than the [B, H, S, D] run");
    }
}
