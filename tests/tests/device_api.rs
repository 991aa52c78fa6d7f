//! The device API a framework calls (`sdpa::device`): `Attention::on_stream`
//! on a caller's stream, `plan_shapes` and `run_views` over borrowed cudarc
//! buffers, scales on the device per head or per (batch, KV head), a
//! reused `Workspace`, raw-pointer views, and what a bad device scale does.
//!
//! Ignored without a GPU; on a GPU machine:
//! `gpu-bundle/bin/device_api --ignored --nocapture --test-threads=1`.

use sdpa::cudarc::driver::{CudaContext, CudaGraph, CudaSlice, CudaStream, DevicePtr, sys};
use sdpa::device::{DeviceScales, Fp8View, OutputViewMut, PagedKv, RunExtras, ScaleLayout, Workspace};
use sdpa::metrics::{GATE, compare};
use sdpa::quant::{from_codes, random_problem};
use sdpa::raw;
use sdpa::reference::{attention_f64, log_sum_exp_f64 as lse_f64};
use sdpa::tensor::to_f32;
use sdpa::{Attention, AttnError, Fp8Tensor, ImageChoice, Options, OutputDtype, Plan, Variant};
use sdpa_tests::lse;
use sdpa_tests::on_own_stream;
use std::sync::Arc;

/// Q, K, V codes on the device.
struct Inputs {
    q: CudaSlice<u8>,
    k: CudaSlice<u8>,
    v: CudaSlice<u8>,
}

fn upload(stream: &Arc<CudaStream>, q: &Fp8Tensor, k: &Fp8Tensor, v: &Fp8Tensor) -> Inputs {
    let copy = |t: &Fp8Tensor| stream.clone_htod(&t.data).expect("copy");
    Inputs { q: copy(q), k: copy(k), v: copy(v) }
}

/// Views of `inputs` as Q `q` and K, V `kv`.
fn views(inputs: &Inputs, q: [usize; 4], kv: [usize; 4]) -> [Fp8View<'_>; 3] {
    [Fp8View::new(inputs.q.as_view(), q), Fp8View::new(inputs.k.as_view(), kv), Fp8View::new(inputs.v.as_view(), kv)]
        .map(|v| v.expect("view"))
}

/// Runs `plan` on `inputs` with scales `[q, k, v]` laid out as `layout`,
/// into a fresh output, and returns its bits.
fn run(
    attn: &Attention,
    plan: &Plan,
    inputs: &Inputs,
    scales: [&[f32]; 3],
    layout: ScaleLayout,
    ws: &mut Workspace,
) -> Result<Vec<u16>, AttnError> {
    let stream = attn.stream();
    let p = plan.problem();
    let [qs, ks, vs] = scales.map(|s| stream.clone_htod(s).expect("scales"));
    let mut o = stream.alloc_zeros::<u16>(p.q_len()).expect("o");
    attn.run_views(
        plan,
        &Fp8View::new(inputs.q.as_view(), p.q_shape())?,
        &Fp8View::new(inputs.k.as_view(), p.kv_shape())?,
        &Fp8View::new(inputs.v.as_view(), p.kv_shape())?,
        &DeviceScales::new(qs.as_view(), ks.as_view(), vs.as_view(), layout),
        &mut OutputViewMut::new(o.as_view_mut(), p.output, p.q_shape())?,
        ws,
    )?;
    let bits = stream.clone_dtoh(&o).expect("copy back");
    stream.synchronize().expect("sync");
    Ok(bits)
}

/// The variants this device runs, one shape each (odd lengths, GQA, causal).
fn cases(attn: &Attention) -> Vec<(Variant, [usize; 4], [usize; 4], bool)> {
    let sm90a = attn.device().image.starts_with("sm_90a");
    [
        (Variant::SplitN64, [2, 8, 256, 64], [2, 8, 256, 64], false),
        (Variant::Split, [1, 8, 333, 128], [1, 2, 500, 128], true),
        (Variant::Wgmma, [1, 4, 1000, 128], [1, 4, 1000, 128], true),
        (Variant::Wgmma, [2, 4, 700, 64], [2, 2, 900, 64], false),
        (Variant::Mma, [1, 2, 300, 64], [1, 2, 300, 64], true),
        (Variant::Decode, [2, 8, 3, 128], [2, 2, 1000, 128], true),
    ]
    .into_iter()
    .filter(|(v, ..)| sm90a || matches!(v, Variant::Mma | Variant::Split | Variant::Decode))
    .collect()
}

#[test]
#[ignore = "needs an NVIDIA GPU with compute capability 8.9+; run on a GPU machine (README: GPU tests)"]
fn views_on_a_callers_stream_give_the_bits_of_the_host_api() {
    let (stream, attn) = on_own_stream();
    let mut checked = 0;
    for (variant, qs, kvs, causal) in cases(&attn) {
        let (q, k, v) = random_problem(qs, kvs, 11);
        let inputs = upload(&stream, &q, &k, &v);
        for output in OutputDtype::ALL {
            let opts = Options::new().causal(causal).variant(variant).output(output);
            let want = attn.forward(&q, &k, &v, &opts).expect("forward").bits;
            // A plan from the host tensors keeps their exponent: the same bits.
            let plan = attn.plan(&q, &k, &v, &opts).expect("plan");
            let mut ws = attn.workspace(&plan).expect("workspace");
            let scales = [&q.scales[..], &k.scales, &v.scales];
            let got = run(&attn, &plan, &inputs, scales, ScaleLayout::PerHead, &mut ws).expect("run_views");
            assert_eq!(got, want, "{} {qs:?} {}: run_views differs from forward", variant.name(), output.name());
            // From shapes alone: the same kernel, and the same bits (each
            // block picks its exponent from the scales it reads).
            let shapes = attn.plan_shapes(qs, kvs, kvs, &opts).expect("plan_shapes");
            assert_eq!(shapes.kernel(), plan.kernel());
            let got = run(&attn, &shapes, &inputs, scales, ScaleLayout::PerHead, &mut ws).expect("run_views");
            assert_eq!(got, want, "{} {qs:?}: plan_shapes differs", variant.name());
            let reference = attention_f64(&q, &k, &v, causal, plan.problem().softmax_scale as f64);
            let values: Vec<f32> = got.iter().map(|&b| to_f32(output, b)).collect();
            let stats = compare(&values, &reference, 6e-2);
            assert!(GATE.passes(&stats), "{} {qs:?} plan_shapes: {stats}", variant.name());
            checked += 1;
            println!(
                "{} q{qs:?} kv{kvs:?} causal={causal} {}: identical; shapes-only {stats}",
                variant.name(),
                output.name()
            );
        }
    }
    assert!(checked > 0, "nothing ran");
}

/// FlashAttention-3's layout: every scale `[B, Hkv]`, a query head taking
/// its key/value head's Q scale; each batch checked against the f64
/// reference of its own scales.
#[test]
#[ignore = "needs an NVIDIA GPU with compute capability 8.9+; run on a GPU machine (README: GPU tests)"]
fn per_batch_head_scales_match_the_f64_reference() {
    let (stream, attn) = on_own_stream();
    for (variant, qs, kvs, causal) in cases(&attn) {
        let [batch, heads_q, seq_q, d] = qs;
        let heads_kv = kvs[1];
        let (q, k, v) = random_problem(qs, kvs, 23);
        let inputs = upload(&stream, &q, &k, &v);
        // Scales that differ by batch and head, over two decades.
        let per = |base: f32, b: usize, h: usize| base * (1.0 + b as f32) * (0.5 + 0.37 * h as f32);
        let table =
            |base: f32| -> Vec<f32> { (0..batch).flat_map(|b| (0..heads_kv).map(move |h| per(base, b, h))).collect() };
        let (q_scales, k_scales, v_scales) = (table(0.02), table(0.03), table(0.01));
        let opts = Options::new().causal(causal).variant(variant);
        let plan = attn.plan_shapes(qs, kvs, kvs, &opts).expect("plan_shapes");
        let mut ws = attn.workspace(&plan).expect("workspace");
        let scales = [&q_scales[..], &k_scales, &v_scales];
        let got = run(&attn, &plan, &inputs, scales, ScaleLayout::PerBatchHead, &mut ws).expect("run_views");
        let group = heads_q / heads_kv;
        for b in 0..batch {
            let slice = |t: &Fp8Tensor, scales: Vec<f32>| {
                let n = t.data.len() / batch;
                from_codes(t.data[b * n..(b + 1) * n].to_vec(), [1, t.shape[1], t.shape[2], t.shape[3]], scales)
            };
            let kv_scale = |s: &[f32]| s[b * heads_kv..(b + 1) * heads_kv].to_vec();
            let qb = slice(&q, (0..heads_q).map(|h| q_scales[b * heads_kv + h / group]).collect());
            let (kb, vb) = (slice(&k, kv_scale(&k_scales)), slice(&v, kv_scale(&v_scales)));
            let reference = attention_f64(&qb, &kb, &vb, causal, plan.problem().softmax_scale as f64);
            let n = heads_q * seq_q * d;
            let values: Vec<f32> = got[b * n..(b + 1) * n].iter().map(|&x| to_f32(OutputDtype::F16, x)).collect();
            let max_ref = reference.iter().fold(0f64, |m, x| m.max(x.abs()));
            let stats = compare(&values, &reference, 6e-2 * max_ref.max(1e-30));
            assert!(
                stats.nan_count == 0 && stats.rel_l2 <= GATE.rel_l2,
                "{} batch {b}: {stats} (max |ref| {max_ref:.3e})",
                variant.name()
            );
            println!("{} q{qs:?} kv{kvs:?} batch {b}: {stats}", variant.name());
        }
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU with compute capability 8.9+; run on a GPU machine (README: GPU tests)"]
fn a_reused_workspace_allocates_nothing() {
    let (stream, attn) = on_own_stream();
    let ctx = stream.context();
    for (variant, qs, kvs, causal) in cases(&attn) {
        let (q, k, v) = random_problem(qs, kvs, 5);
        let inputs = upload(&stream, &q, &k, &v);
        let [qsd, ksd, vsd] = [&q.scales, &k.scales, &v.scales].map(|s| stream.clone_htod(s).expect("scales"));
        let plan = attn.plan_shapes(qs, kvs, kvs, &Options::new().causal(causal).variant(variant)).expect("plan");
        let mut ws = attn.workspace(&plan).expect("workspace");
        let mut o = stream.alloc_zeros::<u16>(plan.problem().q_len()).expect("o");
        let mut call = |ws: &mut Workspace| {
            attn.run_views(
                &plan,
                &Fp8View::new(inputs.q.as_view(), qs).unwrap(),
                &Fp8View::new(inputs.k.as_view(), kvs).unwrap(),
                &Fp8View::new(inputs.v.as_view(), kvs).unwrap(),
                &DeviceScales::new(qsd.as_view(), ksd.as_view(), vsd.as_view(), ScaleLayout::PerHead),
                &mut OutputViewMut::new(o.as_view_mut(), OutputDtype::F16, qs).unwrap(),
                ws,
            )
            .expect("run_views");
        };
        call(&mut ws);
        stream.synchronize().expect("sync");
        let (free_before, _) = ctx.mem_get_info().expect("mem info");
        for _ in 0..100 {
            call(&mut ws);
        }
        stream.synchronize().expect("sync");
        let (free_after, _) = ctx.mem_get_info().expect("mem info");
        assert_eq!(free_after, free_before, "{}: 100 calls changed free device memory", variant.name());
        println!("{} {qs:?}: 100 calls, free memory {free_after} bytes before and after", variant.name());
    }
}

/// The binding path: a borrowed `CUstream`, views from raw addresses (never
/// freed by the views), and the driver's checks of those addresses.
#[test]
#[ignore = "needs an NVIDIA GPU with compute capability 8.9+; run on a GPU machine (README: GPU tests)"]
fn raw_pointer_views_give_the_same_bits() {
    let ctx = CudaContext::new(0).expect("a GPU");
    let owner = ctx.new_stream().expect("stream");
    // SAFETY: `owner` is a live stream of `ctx` and outlives the borrow.
    let stream = unsafe { raw::borrow_stream(&ctx, owner.cu_stream()) };
    let attn = Attention::on_stream(stream.clone(), ImageChoice::Auto).expect("on_stream");
    for (variant, qs, kvs, causal) in cases(&attn) {
        let (q, k, v) = random_problem(qs, kvs, 3);
        let opts = Options::new().causal(causal).variant(variant);
        let want = attn.forward(&q, &k, &v, &opts).expect("forward").bits;
        let plan = attn.plan(&q, &k, &v, &opts).expect("plan");
        let inputs = upload(&stream, &q, &k, &v);
        let scales = [&q.scales, &k.scales, &v.scales].map(|s| stream.clone_htod(s).expect("scales"));
        let o = stream.alloc_zeros::<u16>(plan.problem().q_len()).expect("o");
        let at = |t: &CudaSlice<u8>| t.device_ptr(&stream).0;
        let at_f32 = |t: &CudaSlice<f32>| t.device_ptr(&stream).0;
        let o_at = o.device_ptr(&stream).0;
        let mut ws = attn.workspace(&plan).expect("workspace");
        // SAFETY: every address is a live cudarc allocation of the stated
        // length, alive (and not otherwise used) until the end of the loop body.
        unsafe {
            let dq = Fp8View::from_raw(&stream, at(&inputs.q), qs).expect("q");
            let dk = Fp8View::from_raw(&stream, at(&inputs.k), kvs).expect("k");
            let dv = Fp8View::from_raw(&stream, at(&inputs.v), kvs).expect("v");
            let lens = [q.scales.len(), k.scales.len(), v.scales.len()];
            let addresses = [at_f32(&scales[0]), at_f32(&scales[1]), at_f32(&scales[2])];
            let ds = DeviceScales::from_raw(&stream, addresses, lens, ScaleLayout::PerHead).expect("scales");
            let mut out = OutputViewMut::from_raw(&stream, o_at, OutputDtype::F16, qs).expect("o");
            attn.run_views(&plan, &dq, &dk, &dv, &ds, &mut out, &mut ws).expect("run_views");
            // The driver's checks: a host address, a shape past the allocation.
            let host = q.data.as_ptr() as u64;
            assert!(matches!(Fp8View::from_raw(&stream, host, qs), Err(AttnError::NotDeviceMemory { .. })));
            let [b, h, s, d] = qs;
            assert!(matches!(
                Fp8View::from_raw(&stream, at(&inputs.q), [b, h, s + 1, d]),
                Err(AttnError::BufferLength { .. })
            ));
        }
        let got = stream.clone_dtoh(&o).expect("copy back");
        stream.synchronize().expect("sync");
        assert_eq!(got, want, "{} {qs:?}: raw views differ", variant.name());
        // The views freed nothing: the buffers are still usable.
        assert_eq!(stream.clone_dtoh(&inputs.q).expect("q back"), q.data);
        println!("{} {qs:?}: raw views identical", variant.name());
    }
    // The same kernels on another stream of the context, without a reload.
    let (q, k, v) = random_problem([1, 2, 300, 64], [1, 2, 300, 64], 8);
    let opts = Options::new().variant(Variant::Mma);
    let other = attn.for_stream(ctx.new_stream().expect("stream")).expect("for_stream");
    assert_eq!(other.forward(&q, &k, &v, &opts).expect("forward").bits, attn.forward(&q, &k, &v, &opts).unwrap().bits);
    stream.synchronize().expect("sync");
    drop((attn, other));
    drop(stream);
    owner.synchronize().expect("the borrowed stream is still alive");
}

/// A NaN scale gives NaN rows for the heads it belongs to and leaves every
/// other row's bits as they were (the documented behaviour of
/// `DeviceScales`, which the host cannot check).
#[test]
#[ignore = "needs an NVIDIA GPU with compute capability 8.9+; run on a GPU machine (README: GPU tests)"]
fn a_nan_device_scale_poisons_only_its_heads() {
    let (stream, attn) = on_own_stream();
    for (variant, qs, kvs, causal) in cases(&attn) {
        let [batch, heads_q, seq_q, d] = qs;
        let heads_kv = kvs[1];
        let group = heads_q / heads_kv;
        let (q, k, v) = random_problem(qs, kvs, 9);
        let inputs = upload(&stream, &q, &k, &v);
        let plan = attn.plan_shapes(qs, kvs, kvs, &Options::new().causal(causal).variant(variant)).expect("plan");
        let mut ws = attn.workspace(&plan).expect("workspace");
        let ones = vec![0.05f32; batch * heads_kv];
        let good = run(&attn, &plan, &inputs, [&ones, &ones, &ones], ScaleLayout::PerBatchHead, &mut ws).unwrap();
        // (last batch, KV head 0) gets a NaN K scale.
        let bad_at = (batch - 1) * heads_kv;
        let mut bad_k = ones.clone();
        bad_k[bad_at] = f32::NAN;
        let bad = run(&attn, &plan, &inputs, [&ones, &bad_k, &ones], ScaleLayout::PerBatchHead, &mut ws).unwrap();
        let rows = seq_q * d;
        for (head, (g, b)) in good.chunks(rows).zip(bad.chunks(rows)).enumerate() {
            let (bi, h) = (head / heads_q, head % heads_q);
            let hit = bi == batch - 1 && h / group == 0;
            let key_end_zero = g.iter().all(|&x| x == 0);
            if hit && !key_end_zero {
                assert!(
                    b.iter().zip(g).all(|(&x, &y)| y == 0 || to_f32(OutputDtype::F16, x).is_nan()),
                    "{} head {head}: a NaN scale must give NaN rows",
                    variant.name()
                );
            } else if !hit {
                assert_eq!(b, g, "{} head {head}: untouched by the NaN scale, yet changed", variant.name());
            }
        }
        println!("{} {qs:?}: NaN rows in the bad scale's {group} heads only", variant.name());
    }
}

/// Mistakes in views, scales and workspaces are typed errors before a launch.
#[test]
#[ignore = "needs an NVIDIA GPU with compute capability 8.9+; run on a GPU machine (README: GPU tests)"]
fn view_mistakes_are_typed_errors() {
    let (stream, attn) = on_own_stream();
    let (qs, kvs) = ([1, 4, 256, 64], [1, 2, 256, 64]);
    let (q, k, v) = random_problem(qs, kvs, 1);
    let inputs = upload(&stream, &q, &k, &v);
    let plan = attn.plan_shapes(qs, kvs, kvs, &Options::new().variant(Variant::Mma)).expect("plan");
    let mut ws = attn.workspace(&plan).expect("workspace");
    let scales = [&q.scales[..], &k.scales, &v.scales];
    // Scales of the wrong layout's length.
    let err = run(&attn, &plan, &inputs, scales, ScaleLayout::PerBatchHead, &mut ws).unwrap_err();
    assert!(
        matches!(err, AttnError::BufferLength { ref tensor, expected: 2, actual: 4 } if tensor == "q_scale"),
        "{err}"
    );
    // A view whose length is not its shape's.
    let short = inputs.q.slice(1..);
    assert!(matches!(Fp8View::new(short, qs), Err(AttnError::BufferLength { .. })));
    // A misaligned view (one byte in) of the right length.
    let big = stream.alloc_zeros::<u8>(inputs.q.len() + 16).expect("alloc");
    let shifted = Fp8View::new(big.slice(1..1 + inputs.q.len()), qs).expect("view");
    let [qsd, ksd, vsd] = scales.map(|s| stream.clone_htod(s).expect("scales"));
    let ds = DeviceScales::new(qsd.as_view(), ksd.as_view(), vsd.as_view(), ScaleLayout::PerHead);
    let mut o = stream.alloc_zeros::<u16>(inputs.q.len()).expect("o");
    let k_view = Fp8View::new(inputs.k.as_view(), kvs).unwrap();
    let v_view = Fp8View::new(inputs.v.as_view(), kvs).unwrap();
    let mut out = OutputViewMut::new(o.as_view_mut(), OutputDtype::F16, qs).unwrap();
    let err = attn.run_views(&plan, &shifted, &k_view, &v_view, &ds, &mut out, &mut ws).unwrap_err();
    assert!(matches!(err, AttnError::Misaligned { tensor: "q", align: 16, .. }), "{err}");
    // Views of other shapes than the plan's.
    let err = attn.run_views(&plan, &k_view, &k_view, &v_view, &ds, &mut out, &mut ws).unwrap_err();
    assert!(matches!(err, AttnError::NotPlanned(_)), "{err}");
    // A bf16 output for an f16 plan.
    let mut bf16 = OutputViewMut::new(o.as_view_mut(), OutputDtype::Bf16, qs).unwrap();
    let q_view = Fp8View::new(inputs.q.as_view(), qs).unwrap();
    let err = attn.run_views(&plan, &q_view, &k_view, &v_view, &ds, &mut bf16, &mut ws).unwrap_err();
    assert!(matches!(err, AttnError::ShapeMismatch(_)), "{err}");
    // A workspace made for a plan without scratch, for one with a prepass.
    if attn.device().image.starts_with("sm_90a") {
        let wgmma = attn.plan_shapes(qs, kvs, kvs, &Options::new().variant(Variant::Wgmma)).expect("plan");
        let mut out = OutputViewMut::new(o.as_view_mut(), OutputDtype::F16, qs).unwrap();
        let err = attn.run_views(&wgmma, &q_view, &k_view, &v_view, &ds, &mut out, &mut ws).unwrap_err();
        assert!(matches!(err, AttnError::WorkspaceTooSmall { .. }), "{err}");
        attn.grow_workspace(&mut ws, &wgmma).expect("grow");
        attn.run_views(&wgmma, &q_view, &k_view, &v_view, &ds, &mut out, &mut ws).expect("after growing");
        // And it still serves the first plan.
        attn.run_views(&plan, &q_view, &k_view, &v_view, &ds, &mut out, &mut ws).expect("the first plan");
    }
    stream.synchronize().expect("sync");
}

/// The kernel launches and the other nodes (copies) of a captured graph.
fn graph_nodes(graph: &CudaGraph) -> (usize, usize) {
    let mut count = 0;
    // SAFETY: `graph` owns a live graph; a null node array asks for the
    // count only.
    unsafe { sys::cuGraphGetNodes(graph.cu_graph(), std::ptr::null_mut(), &mut count) }.result().expect("count");
    let mut nodes = vec![std::ptr::null_mut(); count];
    // SAFETY: `nodes` has room for `count` nodes of the same live graph.
    unsafe { sys::cuGraphGetNodes(graph.cu_graph(), nodes.as_mut_ptr(), &mut count) }.result().expect("nodes");
    let kernels = nodes[..count]
        .iter()
        .filter(|&&node| {
            let mut kind = sys::CUgraphNodeType::CU_GRAPH_NODE_TYPE_EMPTY;
            // SAFETY: `node` is a node of the live graph, `kind` a place for its type.
            unsafe { sys::cuGraphNodeGetType(node, &mut kind) }.result().expect("node type");
            kind == sys::CUgraphNodeType::CU_GRAPH_NODE_TYPE_KERNEL
        })
        .count();
    (kernels, count - kernels)
}

/// CUDA-graph capture of `run_views` (buffers without cudarc events).
/// With buffers the workspace never ran eagerly (as a framework's graph
/// pool gives them): two runs on different inputs recorded into one graph
/// (with a tensor-map copy each, for kernels that read tensor maps) replay
/// to the eager bits of each, after eager runs on yet other buffers in
/// between; past `CAPTURE_MAP_SLOTS` sets of buffers a capture is refused
/// with a typed error. With buffers the workspace ran eagerly first, the
/// graph holds the kernel launches only (1 node a run, 2 with a prepass)
/// and replays to the same bits.
#[test]
#[ignore = "needs an NVIDIA GPU with compute capability 8.9+; run on a GPU machine (README: GPU tests)"]
fn run_views_captures_into_a_graph() {
    use sdpa::cudarc::driver::sys::{CUgraphInstantiate_flags, CUstreamCaptureMode};
    use sdpa::device::CAPTURE_MAP_SLOTS;
    // Capture forbids waiting on events recorded outside it, which cudarc
    // does for buffers it tracks: these are made untracked.
    let ctx = CudaContext::new(0).expect("a GPU");
    // SAFETY: every buffer of this test is made, used and freed on `stream`.
    unsafe { ctx.disable_event_tracking() };
    let stream = ctx.new_stream().expect("stream");
    let attn = Attention::on_stream(stream.clone(), ImageChoice::Auto).expect("on_stream");
    let capture = || stream.begin_capture(CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL).expect("capture");
    for (variant, qs, kvs, causal) in cases(&attn) {
        let problems = [1, 2].map(|seed| random_problem(qs, kvs, seed));
        let plan = attn.plan_shapes(qs, kvs, kvs, &Options::new().causal(causal).variant(variant)).expect("plan");
        let [qsd, ksd, vsd] = [&problems[0].0.scales, &problems[0].1.scales, &problems[0].2.scales]
            .map(|s| stream.clone_htod(s).expect("scales"));
        let ds = DeviceScales::new(qsd.as_view(), ksd.as_view(), vsd.as_view(), ScaleLayout::PerHead);
        let mut ws = attn.workspace(&plan).expect("workspace");
        let inputs = problems.each_ref().map(|(q, k, v)| upload(&stream, q, k, v));
        let mut outs = [0, 1].map(|_| stream.alloc_zeros::<u16>(plan.problem().q_len()).expect("o"));
        let run_into = |i: &Inputs, o: &mut CudaSlice<u16>, ws: &mut Workspace| {
            let [dq, dk, dv] = views(i, qs, kvs);
            let mut out = OutputViewMut::new(o.as_view_mut(), OutputDtype::F16, qs).unwrap();
            attn.run_views(&plan, &dq, &dk, &dv, &ds, &mut out, ws)
        };
        // The eager bits, with a workspace of their own.
        let mut eager_ws = attn.workspace(&plan).expect("workspace");
        let want = [0, 1].map(|i| {
            run_into(&inputs[i], &mut outs[i], &mut eager_ws).expect("eager");
            stream.clone_dtoh(&outs[i]).expect("back")
        });
        for o in &mut outs {
            stream.memset_zeros(o).expect("clear");
        }
        stream.synchronize().expect("sync");
        capture();
        let [o0, o1] = &mut outs;
        let recorded = run_into(&inputs[0], o0, &mut ws).and_then(|()| run_into(&inputs[1], o1, &mut ws));
        let graph = stream.end_capture(CUgraphInstantiate_flags(0)).expect("end capture");
        recorded.expect("captured runs");
        let graph = graph.expect("a graph");
        let sizes = sdpa::WorkspaceSize::of(&plan, attn.target());
        let kernels_per_run = if sizes.scratch_bytes > 0 { 2 } else { 1 };
        let copies = if sizes.tile_maps { 2 } else { 0 };
        assert_eq!(graph_nodes(&graph), (2 * kernels_per_run, copies), "{} {qs:?}: first graph", variant.name());
        // Eager runs on other buffers with the same workspace, then the replay.
        let other = upload(&stream, &problems[1].0, &problems[1].1, &problems[1].2);
        let mut scratch = stream.alloc_zeros::<u16>(plan.problem().q_len()).expect("o");
        run_into(&other, &mut scratch, &mut ws).expect("eager between");
        graph.launch().expect("replay");
        for (i, o) in outs.iter().enumerate() {
            let got = stream.clone_dtoh(o).expect("back");
            assert_eq!(got, want[i], "{} {qs:?}: replayed run {i} differs from the eager run", variant.name());
        }
        stream.synchronize().expect("sync");
        // Run eagerly with a fresh workspace first: the capture then records
        // the kernels only, and replays to the eager bits.
        let mut warm_ws = attn.workspace(&plan).expect("workspace");
        for (i, o) in outs.iter_mut().enumerate() {
            run_into(&inputs[i], o, &mut warm_ws).expect("eager warm-up");
            stream.memset_zeros(o).expect("clear");
        }
        stream.synchronize().expect("sync");
        capture();
        let [o0, o1] = &mut outs;
        let recorded = run_into(&inputs[0], o0, &mut warm_ws).and_then(|()| run_into(&inputs[1], o1, &mut warm_ws));
        let warm_graph = stream.end_capture(CUgraphInstantiate_flags(0)).expect("end capture");
        recorded.expect("captured runs");
        let warm_graph = warm_graph.expect("a graph");
        assert_eq!(graph_nodes(&warm_graph), (2 * kernels_per_run, 0), "{} {qs:?}: warm graph", variant.name());
        run_into(&other, &mut scratch, &mut warm_ws).expect("eager between");
        warm_graph.launch().expect("replay");
        for (i, o) in outs.iter().enumerate() {
            let got = stream.clone_dtoh(o).expect("back");
            assert_eq!(got, want[i], "{} {qs:?}: warm replay of run {i} differs from the eager run", variant.name());
        }
        stream.synchronize().expect("sync");
        // Past the capture slots: a typed error (kernels with tensor maps only).
        if sizes.tile_maps {
            let [b, h, sq, d] = qs;
            let big = stream.alloc_zeros::<u8>(b * h * sq * d + 16 * (CAPTURE_MAP_SLOTS + 1)).expect("alloc");
            let [dk, dv] = [inputs[0].k.as_view(), inputs[0].v.as_view()].map(|v| Fp8View::new(v, kvs).unwrap());
            capture();
            let results: Vec<_> = (0..=CAPTURE_MAP_SLOTS)
                .map(|i| {
                    let dq = Fp8View::new(big.slice(16 * i..16 * i + b * h * sq * d), qs).unwrap();
                    let mut out = OutputViewMut::new(scratch.as_view_mut(), OutputDtype::F16, qs).unwrap();
                    attn.run_views(&plan, &dq, &dk, &dv, &ds, &mut out, &mut ws)
                })
                .collect();
            drop(stream.end_capture(CUgraphInstantiate_flags(0)).expect("end capture"));
            // Two slots went to the first graph's buffers.
            let refused = results.iter().position(|r| matches!(r, Err(AttnError::WorkspaceInCapture)));
            assert_eq!(refused, Some(CAPTURE_MAP_SLOTS - 2), "{} {qs:?}: {results:?}", variant.name());
        }
        println!(
            "{} {qs:?}: two captured runs replay to the eager bits ({} kernel nodes; {copies} map copies unless run eagerly first)",
            variant.name(),
            2 * kernels_per_run
        );
    }
}

/// Batch `b`'s first `len` keys of K or V (`[B, Hkv, Skv, D]`) as a tensor
/// of one batch.
fn keys_of(t: &Fp8Tensor, b: usize, len: usize) -> Fp8Tensor {
    let [_, heads, seq, d] = t.shape;
    let data = (0..heads).flat_map(|h| t.data[((b * heads + h) * seq) * d..][..len * d].iter().copied()).collect();
    from_codes(data, [1, heads, len, d], t.scales.clone())
}

/// Batch `b` of Q as a tensor of one batch.
fn batch_of(t: &Fp8Tensor, b: usize) -> Fp8Tensor {
    let [_, heads, seq, d] = t.shape;
    from_codes(t.data[b * heads * seq * d..][..heads * seq * d].to_vec(), [1, heads, seq, d], t.scales.clone())
}

/// `decode` with per-batch key lengths (0, 1, part of the cache, all of it;
/// NaN codes in the slots past them) and the log-sum-exp output: each batch
/// against the f64 reference of its own keys, in one split and in several.
#[test]
#[ignore = "needs an NVIDIA GPU with compute capability 8.9+; run on a GPU machine (README: GPU tests)"]
fn decode_key_lengths_and_lse_match_the_f64_reference() {
    let (stream, attn) = on_own_stream();
    let lens = [0usize, 1, 700, 1500];
    // (causal, Sq, D, Hq, Hkv): several splits each, but the last two
    // (256 folded heads of 16 rows, and 100-row chunks of a prefill over
    // the cache: one split, the kernel stores O itself).
    for (causal, seq_q, d, hq, hkv) in [
        (true, 3, 128, 8, 2),
        (false, 1, 64, 8, 2),
        (true, 16, 64, 8, 2),
        (true, 16, 128, 64, 64),
        (true, 100, 128, 8, 2),
    ] {
        let (qs, kvs) = ([4, hq, seq_q, d], [4, hkv, 1500, d]);
        let (q, mut k, mut v) = random_problem(qs, kvs, 31);
        // The cache slots past each batch's length hold NaN codes: none may
        // reach the output.
        for t in [&mut k, &mut v] {
            for (b, &len) in lens.iter().enumerate() {
                for h in 0..hkv {
                    t.data[((b * hkv + h) * 1500 + len) * d..((b * hkv + h + 1) * 1500) * d].fill(0x7f);
                }
            }
        }
        let inputs = upload(&stream, &q, &k, &v);
        let opts = Options::new().causal(causal).variant(Variant::Decode);
        let plan = attn.plan_shapes(qs, kvs, kvs, &opts).expect("plan_shapes");
        let mut ws = attn.workspace(&plan).expect("workspace");
        let [qsc, ksc, vsc] = [&q.scales, &k.scales, &v.scales].map(|s| stream.clone_htod(s).expect("scales"));
        let lens_dev = stream.clone_htod(&lens.map(|l| l as i32)).expect("lens");
        let mut o = stream.alloc_zeros::<u16>(plan.problem().q_len()).expect("o");
        let mut lse = stream.clone_htod(&vec![f32::NAN; 4 * hq * seq_q]).expect("lse");
        let [qv, kv, vv] = views(&inputs, qs, kvs);
        attn.run_views_with(
            &plan,
            &qv,
            &kv,
            &vv,
            &DeviceScales::new(qsc.as_view(), ksc.as_view(), vsc.as_view(), ScaleLayout::PerHead),
            &mut OutputViewMut::new(o.as_view_mut(), OutputDtype::F16, qs).expect("out"),
            &mut ws,
            RunExtras::new().seq_used_k(lens_dev.as_view()).lse(lse.as_view_mut()),
        )
        .expect("run_views_with");
        let bits = stream.clone_dtoh(&o).expect("o back");
        let lse = stream.clone_dtoh(&lse).expect("lse back");
        stream.synchronize().expect("sync");
        let scale = plan.problem().softmax_scale as f64;
        let rows = hq * seq_q;
        for (b, &len) in lens.iter().enumerate() {
            let out: Vec<f32> = bits[b * rows * d..][..rows * d].iter().map(|&x| to_f32(OutputDtype::F16, x)).collect();
            let (qb, kb, vb) = (batch_of(&q, b), keys_of(&k, b, len), keys_of(&v, b, len));
            let want = if len == 0 { vec![0.0; rows * d] } else { attention_f64(&qb, &kb, &vb, causal, scale) };
            let stats = compare(&out, &want, 6e-2);
            let zero_rows_exact = len > 0 || out.iter().all(|&x| x == 0.0);
            assert!(GATE.passes(&stats) && zero_rows_exact, "causal={causal} Sq={seq_q} b={b} len={len}: {stats}");
            for h in 0..hq {
                for i in 0..seq_q {
                    let got = lse[(b * hq + h) * seq_q + i] as f64;
                    let want = if len == 0 { f64::NEG_INFINITY } else { lse_f64(&qb, &kb, h, i, causal, scale) };
                    let close = lse::close(got, want, 0.0);
                    assert!(close, "causal={causal} Sq={seq_q} b={b} len={len} row ({h},{i}): lse {got} vs {want}");
                }
            }
        }
        println!(
            "decode causal={causal} Sq={seq_q} D={d} lens {lens:?} ({} splits): outputs and LSE ok",
            plan.kv_splits()
        );
    }
}

/// Extras on a plan of another variant, or of the wrong length, are typed
/// errors before any launch.
#[test]
#[ignore = "needs an NVIDIA GPU with compute capability 8.9+; run on a GPU machine (README: GPU tests)"]
fn decode_extras_are_refused_where_they_do_not_fit() {
    let (stream, attn) = on_own_stream();
    let (qs, kvs) = ([2, 4, 1, 64], [2, 4, 300, 64]);
    let (q, k, v) = random_problem(qs, kvs, 5);
    let inputs = upload(&stream, &q, &k, &v);
    let [qsc, ksc, vsc] = [&q.scales, &k.scales, &v.scales].map(|s| stream.clone_htod(s).expect("scales"));
    let lens = stream.clone_htod(&[1i32, 2, 3]).expect("lens");
    for (variant, want) in [(Variant::Split, "VariantUnavailable"), (Variant::Decode, "BufferLength")] {
        let plan = attn.plan_shapes(qs, kvs, kvs, &Options::new().variant(variant)).expect("plan");
        let mut ws = attn.workspace(&plan).expect("workspace");
        let mut o = stream.alloc_zeros::<u16>(plan.problem().q_len()).expect("o");
        let [qv, kv, vv] = views(&inputs, qs, kvs);
        let err = attn
            .run_views_with(
                &plan,
                &qv,
                &kv,
                &vv,
                &DeviceScales::new(qsc.as_view(), ksc.as_view(), vsc.as_view(), ScaleLayout::PerHead),
                &mut OutputViewMut::new(o.as_view_mut(), OutputDtype::F16, qs).expect("out"),
                &mut ws,
                RunExtras::new().seq_used_k(lens.as_view()),
            )
            .expect_err("refused");
        assert!(format!("{err:?}").starts_with(want), "{}: {err:?}", variant.name());
    }
}

/// Batch `b`'s keys of a contiguous `[B, Hkv, S, D]` tensor laid into a
/// pool of pages `[pages, page_size, Hkv, D]` by `table` (`[B, max_pages]`).
fn into_pages(t: &Fp8Tensor, table: &[i32], max_pages: usize, page_size: usize, pages: usize) -> Vec<u8> {
    let [batch, heads, seq, d] = t.shape;
    let mut pool = vec![0x7fu8; pages * page_size * heads * d];
    for b in 0..batch {
        for i in 0..max_pages {
            let page = table[b * max_pages + i] as usize;
            for row in 0..page_size.min(seq - i * page_size) {
                for h in 0..heads {
                    let from = ((b * heads + h) * seq + i * page_size + row) * d;
                    let to = ((page * page_size + row) * heads + h) * d;
                    pool[to..to + d].copy_from_slice(&t.data[from..from + d]);
                }
            }
        }
    }
    pool
}

/// A paged cache (pages shuffled in the pool, NaN codes in every unused
/// slot) gives the bits of the same keys contiguous, with per-batch
/// lengths, at page sizes 32, 64 and 256, for a few query rows and for a
/// causal prefill chunk of 200 over the cache (`decode_paged_time` times
/// them).
#[test]
#[ignore = "needs an NVIDIA GPU with compute capability 8.9+; run on a GPU machine (README: GPU tests)"]
fn paged_cache_gives_the_bits_of_the_contiguous_one() {
    let (stream, attn) = on_own_stream();
    for (page_size, qs, seq, causal) in [
        (64usize, [3, 8, 1, 128], 1000usize, false),
        (32, [2, 4, 4, 64], 300, false),
        (256, [8, 32, 1, 128], 8192, false),
        (64, [2, 8, 200, 128], 1000, true),
    ] {
        let [batch, hq, _, d] = qs;
        let hkv = hq / 4;
        let max_pages = seq.div_ceil(page_size);
        let kvs = [batch, hkv, max_pages * page_size, d];
        let (q, k, v) = random_problem(qs, kvs, 41);
        let lens: Vec<i32> = (0..batch).map(|b| seq.saturating_sub(37 * b).max(1) as i32).collect();
        // Every batch's pages, shuffled over a pool with five spare pages.
        let pages = batch * max_pages + 5;
        let table: Vec<i32> = (0..(batch * max_pages) as i32).map(|i| (i * 7919 + 3) % pages as i32).collect();
        let mut distinct = table.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(distinct.len(), table.len(), "a table of distinct pages");
        let pool_shape = [pages, page_size, hkv, d];
        let [k_pool, v_pool] =
            [&k, &v].map(|t| stream.clone_htod(&into_pages(t, &table, max_pages, page_size, pages)).expect("pool"));
        let table_dev = stream.clone_htod(&table).expect("table");
        let lens_dev = stream.clone_htod(&lens).expect("lens");
        let inputs = upload(&stream, &q, &k, &v);
        let paged = PagedKv::new(
            Fp8View::new(k_pool.as_view(), pool_shape).expect("k pool"),
            Fp8View::new(v_pool.as_view(), pool_shape).expect("v pool"),
            table_dev.as_view(),
            [batch, max_pages],
        )
        .expect("paged");
        assert_eq!(paged.kv_shape(), kvs);
        let plan = attn.plan_paged(qs, &paged, &Options::new().causal(causal)).expect("plan_paged");
        assert_eq!(plan.variant(), Variant::Decode);
        let refused = attn.plan_paged(qs, &paged, &Options::new().variant(Variant::Wgmma));
        assert!(matches!(refused, Err(AttnError::VariantUnavailable { .. })), "{refused:?}");
        let mut ws = attn.workspace(&plan).expect("workspace");
        let [qsc, ksc, vsc] = [&q.scales, &k.scales, &v.scales].map(|s| stream.clone_htod(s).expect("scales"));
        let scales = DeviceScales::new(qsc.as_view(), ksc.as_view(), vsc.as_view(), ScaleLayout::PerHead);
        let mut o_flat = stream.alloc_zeros::<u16>(plan.problem().q_len()).expect("o");
        let mut o_paged = stream.alloc_zeros::<u16>(plan.problem().q_len()).expect("o");
        let [qv, kv, vv] = views(&inputs, qs, kvs);
        let lens = || RunExtras::new().seq_used_k(lens_dev.as_view());
        let mut out = OutputViewMut::new(o_flat.as_view_mut(), OutputDtype::F16, qs).expect("out");
        attn.run_views_with(&plan, &qv, &kv, &vv, &scales, &mut out, &mut ws, lens()).expect("contiguous");
        let mut ws_paged = attn.workspace(&plan).expect("workspace");
        let mut out = OutputViewMut::new(o_paged.as_view_mut(), OutputDtype::F16, qs).expect("out");
        attn.run_paged(&plan, &qv, &paged, &scales, &mut out, &mut ws_paged, lens()).expect("paged");
        let (want, got) = (stream.clone_dtoh(&o_flat).expect("o"), stream.clone_dtoh(&o_paged).expect("o"));
        stream.synchronize().expect("sync");
        assert_eq!(got, want, "page size {page_size} {qs:?}: paged differs from contiguous");
        assert!(got.iter().all(|&x| to_f32(OutputDtype::F16, x).is_finite()), "NaN from an unused slot");
        println!("paged {page_size}-key pages q{qs:?} kv{kvs:?} causal={causal}: bit-identical to contiguous");
    }
}
