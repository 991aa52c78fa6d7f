//! Strided `[B, S, H, D]` views (`Fp8View::bshd_strided`) on the GPU: Q,
//! K and V read in place from buffers whose heads and rows have gaps (K
//! and V as the halves of one fused KV buffer, the gaps full of E4M3 NaN
//! codes) give the bits of the same tensors dense, for the `wgmma` packed
//! twins and `decode` (strided K and V, dense Q), on and around the tile
//! edges, GQA, causal, also fuzzed (48 cases by default; `PROPTEST_CASES`
//! sets it); and the strides the kernels cannot read are typed errors.

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use sdpa::device::{DeviceScales, Fp8View, OutputViewMut, RowStrides, ScaleLayout};
use sdpa::quant::random_problem;
use sdpa::{AttnError, Layout, Options, OutputDtype, Variant};
use sdpa_tests::on_own_stream;
use sdpa_tests::views::{Placement, run_placed};

#[test]
#[ignore = "needs an NVIDIA GPU with the sm_90a image (Hopper); run on a GPU machine (README: GPU tests)"]
fn strided_views_give_the_dense_bits() {
    let (stream, attn) = on_own_stream();
    // (variant, D, causal, B, Hq, Hkv, Sq, Skv, head gap, row gap)
    let cases = [
        (Variant::Wgmma, 128, true, 3, 8, 2, 200, 333, 16, 32),
        (Variant::Wgmma, 64, false, 2, 4, 1, 129, 63, 0, 16),
        (Variant::Wgmma, 64, true, 2, 6, 2, 192, 192, 64, 0),
        (Variant::WgmmaFp8Pv, 128, false, 2, 4, 1, 300, 129, 32, 16),
        (Variant::WgmmaFp8Pv, 64, true, 3, 4, 2, 65, 500, 16, 48),
        (Variant::Decode, 128, false, 2, 8, 2, 1, 3000, 16, 16),
        (Variant::Decode, 64, true, 3, 4, 1, 1, 777, 0, 32),
    ];
    for (variant, d, causal, b, hq, hkv, sq, skv, head_gap, row_gap) in cases {
        let (q, k, v) = random_problem([b, hq, sq, d], [b, hkv, skv, d], 7 + d as u64 + skv as u64);
        let what = format!("{} D={d} causal={causal} B={b} {hq}:{hkv} Sq={sq} Skv={skv}", variant.name());
        let opts = Options::new().causal(causal).variant(variant).output(OutputDtype::F16).layout(Layout::Bshd);
        let strided_q = variant != Variant::Decode;
        let placement = Placement::Strided { head_gap, row_gap, strided_q };
        let dense = run_placed(&stream, &attn, (&q, &k, &v), &opts, Placement::Dense).expect("dense run");
        let strided = run_placed(&stream, &attn, (&q, &k, &v), &opts, placement).expect("strided run");
        let nan = strided.o_bits.iter().filter(|&&x| x & 0x7C00 == 0x7C00 && x & 0x03FF != 0).count();
        let differing = strided.o_bits.iter().zip(&dense.o_bits).filter(|(a, b)| a != b).count();
        let lse_differing = strided.lse.iter().zip(&dense.lse).filter(|(a, b)| a.to_bits() != b.to_bits()).count();
        println!("{what}: gaps {head_gap}/{row_gap}: {differing} of {} elements differ, {nan} NaN", dense.o_bits.len());
        assert_eq!(nan, 0, "{what}: the output holds NaN (a gap's codes were read)");
        assert_eq!(differing, 0, "{what}: strided views give other bits than dense ones");
        assert_eq!(lse_differing, 0, "{what}: strided views give another log-sum-exp");
    }
}

/// One fuzzed case: the variant, D, causal, batch, heads, lengths, the
/// gaps (multiples of 16 elements) and the inputs' seed.
#[derive(Clone, Debug)]
struct Case {
    variant: Variant,
    head_dim: usize,
    causal: bool,
    batch: usize,
    heads: (usize, usize),
    lens: (usize, usize),
    gaps: (usize, usize),
    seed: u64,
}

fn length() -> impl Strategy<Value = usize> {
    prop_oneof![Just(1usize), 62usize..67, 126usize..131, 190usize..195, 1usize..400]
}

fn cases() -> impl Strategy<Value = Case> {
    let variant = prop_oneof![Just(Variant::Wgmma), Just(Variant::WgmmaFp8Pv), Just(Variant::Decode)];
    let heads = prop_oneof![Just((4, 2)), Just((2, 2)), Just((4, 1)), Just((6, 3))];
    let gap = (0usize..4).prop_map(|n| 16 * n);
    (variant, prop_oneof![Just(64usize), Just(128)], any::<bool>(), 1usize..4, heads, length(), length())
        .prop_flat_map(move |(variant, head_dim, causal, batch, heads, sq, skv)| {
            let sq = if variant == Variant::Decode { 1 } else { sq };
            (
                Just(Case { variant, head_dim, causal, batch, heads, lens: (sq, skv), gaps: (0, 0), seed: 0 }),
                gap.clone(),
                gap.clone(),
                any::<u64>(),
            )
        })
        .prop_map(|(case, head_gap, row_gap, seed)| Case { gaps: (head_gap, row_gap), seed, ..case })
}

#[test]
#[ignore = "needs an NVIDIA GPU with the sm_90a image (Hopper); run on a GPU machine (README: GPU tests)"]
fn fuzzed_strides_give_the_dense_bits() {
    let (stream, attn) = on_own_stream();
    let cases_run = std::env::var("PROPTEST_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(48);
    let mut runner = TestRunner::new(Config { cases: cases_run, failure_persistence: None, ..Config::default() });
    let result = runner.run(&cases(), |c| {
        let (hq, hkv) = c.heads;
        let (sq, skv) = c.lens;
        let (q, k, v) = random_problem([c.batch, hq, sq, c.head_dim], [c.batch, hkv, skv, c.head_dim], c.seed);
        let opts = Options::new().causal(c.causal).variant(c.variant).layout(Layout::Bshd).output(OutputDtype::F16);
        let (head_gap, row_gap) = c.gaps;
        let placement = Placement::Strided { head_gap, row_gap, strided_q: c.variant != Variant::Decode };
        let dense = run_placed(&stream, &attn, (&q, &k, &v), &opts, Placement::Dense).expect("dense run");
        let strided = run_placed(&stream, &attn, (&q, &k, &v), &opts, placement).expect("strided run");
        let nan = strided.o_bits.iter().any(|&x| x & 0x7C00 == 0x7C00 && x & 0x03FF != 0);
        prop_assert!(!nan, "{c:?}: NaN in the output (a gap's codes read, or a row not written)");
        prop_assert!(strided.o_bits == dense.o_bits, "{c:?}: other bits than dense");
        let same_lse = strided.lse.iter().zip(&dense.lse).all(|(a, b)| a.to_bits() == b.to_bits());
        prop_assert!(same_lse, "{c:?}: another log-sum-exp than dense");
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
    println!("strides fuzz: {cases_run} cases give the dense bits");
}

#[test]
#[ignore = "needs an NVIDIA GPU with the sm_90a image (Hopper); run on a GPU machine (README: GPU tests)"]
fn strides_the_kernels_cannot_read_are_typed_errors() {
    let (stream, attn) = on_own_stream();
    let [b, s, h, d] = [2, 64, 4, 64];
    let wide = RowStrides { row: 2 * h * d, head: d };
    let codes = stream.alloc_zeros::<u8>(b * s * wide.row).expect("codes");
    let mut o = stream.alloc_zeros::<u16>(b * s * h * d).expect("o");
    let scales = stream.clone_htod(&[1.0f32; 4]).expect("scales");
    let scales = DeviceScales::new(scales.as_view(), scales.as_view(), scales.as_view(), ScaleLayout::PerHead);
    let memory = [b, s, h, d];
    let strided = |strides| Fp8View::bshd_strided(codes.as_view(), memory, strides);
    // Strides the copies cannot take, and a buffer shorter than the view.
    for bad in [RowStrides { row: wide.row + 8, head: d }, RowStrides { row: 0, head: d }] {
        let refused = strided(bad).err();
        assert!(matches!(refused, Some(AttnError::InvalidStrides { .. })), "{bad:?}: {refused:?}");
    }
    let extent = wide.extent(b * s, h, d).expect("extent");
    let short = Fp8View::bshd_strided(codes.slice(..extent - 1), memory, wide).err();
    assert!(matches!(short, Some(AttnError::BufferLength { .. })), "{short:?}");
    let dense = Fp8View::bshd(codes.slice(..b * s * h * d), memory).expect("dense view");
    assert_eq!(strided(RowStrides::dense(h, d)).expect("dense strides").row_strides(), None);
    let mut out = OutputViewMut::bshd(o.as_view_mut(), OutputDtype::F16, memory).expect("out");
    let shape = [b, h, s, d];
    let plan = attn.plan_shapes(shape, shape, shape, &Options::new().layout(Layout::Bshd)).expect("plan");
    let mut ws = attn.workspace(&plan).expect("workspace");
    // K and V of different strides.
    let k = strided(wide).expect("strided view");
    let refused = attn.run_views(&plan, &dense, &k, &dense, &scales, &mut out, &mut ws);
    assert!(matches!(refused, Err(AttnError::InvalidStrides { .. })), "{refused:?}");
    // `decode` reads Q dense.
    let one = [b, h, 1, d];
    let decode = Options::new().layout(Layout::Bshd).variant(Variant::Decode);
    let plan = attn.plan_shapes(one, shape, shape, &decode).expect("decode plan");
    let mut ws = attn.workspace(&plan).expect("workspace");
    let q = Fp8View::bshd_strided(codes.as_view(), [b, 1, h, d], wide).expect("strided q");
    let mut out = OutputViewMut::bshd(o.slice_mut(..b * h * d), OutputDtype::F16, [b, 1, h, d]).expect("out");
    let refused = attn.run_views(&plan, &q, &k, &k, &scales, &mut out, &mut ws);
    assert!(matches!(refused, Err(AttnError::InvalidStrides { .. })), "{refused:?}");
    // The same call with Q dense runs.
    let q = Fp8View::bshd(codes.slice(..b * h * d), [b, 1, h, d]).expect("dense q");
    attn.run_views(&plan, &q, &k, &k, &scales, &mut out, &mut ws).expect("strided K and V run under decode");
    stream.synchronize().expect("sync");
    println!("strides: typed errors; decode runs strided K and V");
}
