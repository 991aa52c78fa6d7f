//! Inputs already on the device (`Attention::to_device`, `prepare`) give
//! the bits of host uploads, with tensors made on the `Attention`'s stream
//! or on another one (which `prepare` orders before its launches), in both
//! output types; `into_inputs` hands the tensors back for another problem,
//! and `DeviceOutput::data` is the buffer `download` copies.
//!
//! Ignored without a GPU; on a GPU machine:
//! `gpu-bundle/bin/device_inputs --ignored --nocapture --test-threads=1`.

use kernels_gpu::variant::OutputDtype;
use sdpa::quant::random_problem;
use sdpa::{Attention, DeviceFp8Tensor, DeviceProblem, Fp8Tensor, Options, Variant};

/// Runs `dev` into a poisoned buffer and returns the output's bits, read
/// both through `download` and straight from `DeviceOutput::data`.
fn run(attn: &Attention, dev: &DeviceProblem) -> (Vec<u16>, Vec<u16>) {
    let mut out = attn.alloc_output(dev).expect("alloc");
    attn.poison(&mut out).expect("poison");
    attn.run(dev, &mut out).expect("run");
    let downloaded = attn.download(&out).expect("download");
    assert_eq!((out.dtype(), out.shape()), (downloaded.dtype, downloaded.shape));
    let raw = attn.stream().clone_dtoh(out.data()).expect("copy back");
    attn.stream().synchronize().expect("sync");
    (downloaded.bits, raw)
}

/// A copy of `t` made on a stream of its own (forked from the
/// `Attention`'s), with nothing synchronized after it.
fn on_another_stream(attn: &Attention, t: &Fp8Tensor) -> DeviceFp8Tensor {
    let stream = attn.stream().fork().expect("fork");
    DeviceFp8Tensor { data: stream.clone_htod(&t.data).expect("copy"), shape: t.shape, scales: t.scales.clone() }
}

#[test]
#[ignore = "needs an NVIDIA GPU with compute capability 8.9+; run on a GPU machine (README: GPU tests)"]
fn device_inputs_give_the_bits_of_host_uploads() {
    let attn = Attention::new(0).expect("a GPU for the GPU tests");
    let sm90a = attn.device().image.starts_with("sm_90a");
    let mut checked = 0;
    for (variant, shape, causal) in [
        (Variant::SplitN64, [2, 8, 256, 64], false),
        (Variant::Wgmma, [1, 4, 1000, 128], true),
        (Variant::Mma, [1, 2, 300, 64], true),
    ] {
        if !sm90a && variant != Variant::Mma {
            continue;
        }
        let (q, k, v) = random_problem(shape, shape, 7);
        for output in OutputDtype::ALL {
            let opts = Options::new().causal(causal).variant(variant).output(output);
            let plan = attn.plan(&q, &k, &v, &opts).expect("plan");
            let (want, _) = run(&attn, &attn.upload(&plan, &q, &k, &v).expect("upload"));
            let same_stream = [&q, &k, &v].map(|t| attn.to_device(t).expect("to_device"));
            let [dq, dk, dv] = same_stream;
            let dev = attn.prepare(&plan, dq, dk, dv).expect("prepare");
            let (got, raw) = run(&attn, &dev);
            assert_eq!(got, want, "{} {shape:?} {}: prepare differs from upload", variant.name(), output.name());
            assert_eq!(raw, want, "DeviceOutput::data is not what download copies");
            // The tensors back, for the other masking.
            let [dq, dk, dv] = dev.into_inputs();
            assert_eq!((dq.shape, dk.shape, dv.shape), (q.shape, k.shape, v.shape));
            let flipped = attn.plan(&q, &k, &v, &opts.causal(!causal)).expect("plan");
            let (want, _) = run(&attn, &attn.upload(&flipped, &q, &k, &v).expect("upload"));
            let (got, _) = run(&attn, &attn.prepare(&flipped, dq, dk, dv).expect("prepare again"));
            assert_eq!(got, want, "{} {shape:?}: reused tensors differ", variant.name());
            // Made on another stream.
            let [dq, dk, dv] = [&q, &k, &v].map(|t| on_another_stream(&attn, t));
            let (got, _) = run(&attn, &attn.prepare(&plan, dq, dk, dv).expect("prepare"));
            assert_eq!(got, run(&attn, &attn.upload(&plan, &q, &k, &v).expect("upload")).0);
            checked += 1;
            println!("{} {shape:?} causal={causal} {}: identical", variant.name(), output.name());
        }
    }
    println!("{checked} (variant, shape, output) triples checked");
    assert!(checked > 0, "nothing ran");
}

/// Validation reads device tensors as it reads host ones.
#[test]
#[ignore = "needs an NVIDIA GPU with compute capability 8.9+; run on a GPU machine (README: GPU tests)"]
fn device_inputs_are_validated() {
    let attn = Attention::new(0).expect("a GPU for the GPU tests");
    let (q, k, v) = random_problem([1, 2, 64, 64], [1, 2, 64, 64], 1);
    let [dq, dk, mut dv] = [&q, &k, &v].map(|t| attn.to_device(t).expect("to_device"));
    dv.scales.pop();
    let err = attn.plan(&dq, &dk, &dv, &Options::default()).expect_err("one scale short");
    assert!(err.to_string().contains("v_scale"), "{err}");
}
