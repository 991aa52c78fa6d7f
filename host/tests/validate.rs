//! Every invalid input gets a typed error that names it, and nothing is
//! launched (these run without a GPU: validation needs none).

use sdpa::options::variant_by_name;
use sdpa::validate::{Problem, validate};
use sdpa::{AttnError, Fp8Tensor, Options, OutputDtype, Plan, Target, Variant, VariantChoice};

fn tensor(shape: [usize; 4]) -> Fp8Tensor {
    Fp8Tensor { data: vec![0x38; shape.iter().product()], shape, scales: vec![1.0; shape[1]] }
}

fn check(q: &Fp8Tensor, k: &Fp8Tensor, v: &Fp8Tensor, opts: &Options) -> Result<Problem, AttnError> {
    validate(q, k, v, opts)
}

/// An H100's or H200's sm_90a image and SMs.
const SM90A: Target = Target { sm90a: true, multiprocessors: 132 };

#[test]
fn a_valid_problem_passes_and_its_plan_picks_the_kernel() {
    let (q, kv) = (tensor([2, 8, 77, 64]), tensor([2, 2, 300, 64]));
    let opts = Options::new().causal(true);
    let p = check(&q, &kv, &kv, &opts).unwrap();
    assert_eq!((p.batch, p.heads_q, p.heads_kv, p.seq_q, p.seq_kv, p.head_dim), (2, 8, 2, 77, 300, 64));
    assert_eq!(p.softmax_scale, 0.125);
    assert_eq!(p.scales, [vec![1.0; 8], vec![1.0; 2], vec![1.0; 2]].concat());
    assert!(p.causal);
    let fixed = Plan::new(p.clone(), Variant::Mma.into(), SM90A).unwrap();
    assert_eq!((fixed.variant(), fixed.kernel().tiles.head_dim), (Variant::Mma, 64));
    assert_eq!(fixed.problem(), &p);
}

#[test]
fn options_default_to_the_recommendation() {
    assert_eq!(Options::default().variant, VariantChoice::Auto);
    let (q, kv) = (tensor([4, 16, 2048, 64]), tensor([4, 16, 2048, 64]));
    let p = check(&q, &kv, &kv, &Options::default()).unwrap();
    assert_eq!(Plan::new(p.clone(), VariantChoice::Auto, SM90A).unwrap().variant(), Variant::Wgmma);
    let l4 = Target { sm90a: false, multiprocessors: 58 };
    assert_eq!(Plan::new(p, VariantChoice::Auto, l4).unwrap().variant(), Variant::Mma);
}

#[test]
fn a_plan_refuses_hopper_variants_off_sm90a_and_kernels_that_do_not_fit() {
    let t = tensor([1, 2, 511, 64]);
    let p = check(&t, &t, &t, &Options::default()).unwrap();
    let l4 = Target { sm90a: false, multiprocessors: 58 };
    match Plan::new(p.clone(), Variant::Wgmma.into(), l4) {
        Err(e @ AttnError::VariantUnavailable { .. }) => assert!(e.to_string().contains("sm_90a"), "{e}"),
        other => panic!("{other:?}"),
    }
    let plan = Plan::new(p, Variant::SplitN64.into(), SM90A).unwrap();
    let pairs = kernels_gpu::kernels::KERNELS.iter().find(|k| k.pair_rows).unwrap();
    assert!(matches!(plan.clone().with_kernel(pairs), Err(AttnError::KernelLengths { .. })), "odd lengths");
    let d128 = kernels_gpu::kernels::find(Variant::Mma, 128).unwrap();
    assert!(matches!(plan.clone().with_kernel(d128), Err(AttnError::KernelMismatch { .. })));
    let mma = kernels_gpu::kernels::find(Variant::Mma, 64).unwrap();
    assert_eq!(plan.with_kernel(mma).unwrap().variant(), Variant::Mma);
}

#[test]
fn inputs_must_be_the_plans() {
    let t = tensor([1, 2, 64, 64]);
    let p = check(&t, &t, &t, &Options::default()).unwrap();
    assert!(p.check_inputs(&t, &t, &t).is_ok());
    let mut rescaled = t.clone();
    rescaled.scales[0] = 2.0;
    assert!(matches!(p.check_inputs(&t, &t, &rescaled), Err(AttnError::NotPlanned(_))));
    let longer = tensor([1, 2, 65, 64]);
    assert!(matches!(p.check_inputs(&longer, &t, &t), Err(AttnError::NotPlanned(_))));
    let mut short = t.clone();
    short.data.pop();
    assert!(matches!(p.check_inputs(&t, &short, &t), Err(AttnError::BufferLength { .. })));
}

#[test]
fn mismatched_shapes_are_refused() {
    let q = tensor([1, 2, 16, 64]);
    let cases = [
        (tensor([1, 2, 16, 64]), tensor([1, 2, 17, 64]), "k is"),
        (tensor([2, 2, 16, 64]), tensor([2, 2, 16, 64]), "batch"),
        (tensor([1, 2, 16, 128]), tensor([1, 2, 16, 128]), "head_dim"),
    ];
    for (k, v, needle) in cases {
        match check(&q, &k, &v, &Options::default()) {
            Err(AttnError::ShapeMismatch(msg)) => assert!(msg.contains(needle), "{msg}"),
            other => panic!("expected ShapeMismatch({needle}), got {other:?}"),
        }
    }
}

#[test]
fn unsupported_head_dims_are_refused() {
    for d in [1, 32, 80, 96, 256] {
        let t = tensor([1, 1, 4, d]);
        match check(&t, &t, &t, &Options::default()) {
            Err(AttnError::UnsupportedHeadDim { head_dim, supported }) => {
                assert_eq!(head_dim, d);
                assert_eq!(supported, vec![64, 128]);
            }
            other => panic!("D={d}: {other:?}"),
        }
    }
}

#[test]
fn zero_dimensions_are_refused() {
    let ok = tensor([1, 2, 8, 64]);
    for i in 0..4 {
        let mut shape = [1, 2, 8, 64];
        shape[i] = 0;
        let bad = Fp8Tensor { data: vec![], shape, scales: vec![1.0; shape[1]] };
        assert!(matches!(
            check(&bad, &ok, &ok, &Options::default()),
            Err(AttnError::ZeroDimension { tensor: "q", .. })
        ));
        assert!(matches!(
            check(&ok, &bad, &ok, &Options::default()),
            Err(AttnError::ZeroDimension { tensor: "k", .. })
        ));
        assert!(matches!(
            check(&ok, &ok, &bad, &Options::default()),
            Err(AttnError::ZeroDimension { tensor: "v", .. })
        ));
    }
}

#[test]
fn heads_must_divide() {
    let (q, kv) = (tensor([1, 6, 8, 64]), tensor([1, 4, 8, 64]));
    assert!(matches!(
        check(&q, &kv, &kv, &Options::default()),
        Err(AttnError::HeadsNotDivisible { heads_q: 6, heads_kv: 4 })
    ));
}

#[test]
fn bad_scales_are_refused() {
    let t = tensor([1, 2, 8, 64]);
    for bad in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 0.0, -0.0, -1.0] {
        let opts = Options::new().scale(bad);
        match check(&t, &t, &t, &opts) {
            Err(AttnError::InvalidScale { what, .. }) => assert_eq!(what, "softmax scale"),
            other => panic!("softmax scale {bad}: {other:?}"),
        }
        for (i, name) in ["q", "k", "v"].into_iter().enumerate() {
            let mut ts = [t.clone(), t.clone(), t.clone()];
            ts[i].scales[1] = bad;
            match check(&ts[0], &ts[1], &ts[2], &Options::default()) {
                Err(AttnError::InvalidScale { what, .. }) => assert_eq!(what, format!("{name}_scale[1]")),
                other => panic!("{name} scale {bad}: {other:?}"),
            }
        }
    }
}

#[test]
fn wrong_buffer_lengths_are_refused() {
    let t = tensor([1, 2, 8, 64]);
    let mut short = t.clone();
    short.data.pop();
    match check(&t, &short, &t, &Options::default()) {
        Err(AttnError::BufferLength { tensor, expected, actual }) => {
            assert_eq!((tensor.as_str(), expected, actual), ("k", 1024, 1023));
        }
        other => panic!("{other:?}"),
    }
    let mut few_scales = t.clone();
    few_scales.scales.pop();
    match check(&t, &t, &few_scales, &Options::default()) {
        Err(AttnError::BufferLength { tensor, expected, actual }) => {
            assert_eq!((tensor.as_str(), expected, actual), ("v_scale", 2, 1));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn sizes_beyond_the_index_types_are_refused() {
    let opts = Options::default();
    let too_long = [1, 1, 1 << 30, 64];
    assert!(matches!(Problem::new(too_long, [1, 1, 8, 64], [1, 1, 8, 64], &opts), Err(AttnError::TooLarge(_))));
    assert!(matches!(Problem::new([1, 1, 8, 64], too_long, too_long, &opts), Err(AttnError::TooLarge(_))));
    let many_heads = [1, 65_536, 8, 64];
    assert!(matches!(Problem::new(many_heads, [1, 1, 8, 64], [1, 1, 8, 64], &opts), Err(AttnError::TooLarge(_))));
    let huge_batch = [70_000, 1, 8, 64];
    assert!(matches!(Problem::new(huge_batch, huge_batch, huge_batch, &opts), Err(AttnError::TooLarge(_))));
}

#[test]
fn unknown_variants_list_the_known_ones() {
    assert_eq!(variant_by_name("mma").unwrap(), Variant::Mma);
    match variant_by_name("fast") {
        Err(e @ AttnError::UnknownVariant { .. }) => assert!(e.to_string().contains("mma, wgmma"), "{e}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(VariantChoice::from_name("auto").unwrap(), VariantChoice::Auto);
    assert_eq!(VariantChoice::from_name("split").unwrap(), VariantChoice::Fixed(Variant::Split));
    for choice in [VariantChoice::Auto, VariantChoice::Fixed(Variant::Wgmma)] {
        assert_eq!(VariantChoice::from_name(choice.name()).unwrap(), choice);
    }
    match VariantChoice::from_name("fast") {
        Err(e @ AttnError::UnknownVariant { .. }) => assert!(e.to_string().contains("auto, "), "{e}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn without_a_driver_new_returns_an_error_not_a_panic() {
    // On a machine with a working GPU this constructs; anywhere else it must
    // be one of the typed "cannot use a GPU here" errors.
    match sdpa::Attention::new(0) {
        Ok(attn) => assert!(attn.device().capability >= (8, 9)),
        Err(AttnError::NoDriver(_) | AttnError::NoDevice { .. } | AttnError::UnsupportedDevice { .. }) => {}
        Err(other) => panic!("unexpected error kind: {other}"),
    }
    let huge = sdpa::Attention::new(1 << 20);
    assert!(matches!(huge, Err(AttnError::NoDriver(_) | AttnError::NoDevice { .. })), "{:?}", huge.err());
}

#[test]
fn scale_products_that_would_overflow_or_underflow_the_kernels_are_refused() {
    let t = tensor([1, 2, 8, 64]);
    let with = |qs: f32, ks: f32, vs: f32| {
        let (mut q, mut k, mut v) = (t.clone(), t.clone(), t.clone());
        q.scales[1] = qs;
        k.scales[1] = ks;
        v.scales[1] = vs;
        check(&q, &k, &v, &Options::default())
    };
    assert!(with(1.0, 1.0, 1.0).is_ok());
    assert!(with(1e-3, 1e-3, 100.0).is_ok());
    for (qs, ks, vs) in [(1e-23, 1e-23, 1.0), (1e18, 1e18, 1.0), (1.0, 1.0, 1e6)] {
        match with(qs, ks, vs) {
            Err(AttnError::ScaleOutOfRange { what, .. }) => assert!(what.contains("[1]"), "{what}"),
            other => panic!("q={qs} k={ks} v={vs}: {other:?}"),
        }
    }
}

#[test]
fn bf16_output_takes_v_scales_beyond_f16s_range() {
    let t = tensor([1, 2, 8, 64]);
    let with = |vs: f32, output: OutputDtype| {
        let mut v = t.clone();
        v.scales[1] = vs;
        check(&t, &t, &v, &Options::new().output(output))
    };
    // 448 x 146 = 65408 fits f16; 448 x 147 does not.
    assert!(with(146.0, OutputDtype::F16).is_ok());
    match with(147.0, OutputDtype::F16) {
        Err(e @ AttnError::ScaleOutOfRange { .. }) => {
            let text = e.to_string();
            assert!(text.starts_with("v_scale[1] = 1.47e2 is out of range"), "{text}");
            assert!(text.contains("fit f16") && text.contains("bf16 output"), "{text}");
        }
        other => panic!("{other:?}"),
    }
    for vs in [147.0, 1e6, 7e35] {
        let p = with(vs, OutputDtype::Bf16).unwrap_or_else(|e| panic!("v_scale {vs}: {e}"));
        assert_eq!(p.output, OutputDtype::Bf16);
        let plan = Plan::new(p, VariantChoice::Auto, SM90A).unwrap();
        assert!(plan.kernel().entry.ends_with("_bf16"), "{}", plan.kernel().entry);
    }
    // 448 x 1e36 is past bf16's 3.39e38.
    match with(1e36, OutputDtype::Bf16) {
        Err(e @ AttnError::ScaleOutOfRange { .. }) => assert!(e.to_string().contains("fit bf16"), "{e}"),
        other => panic!("{other:?}"),
    }
}
