//! Overlapped launches (programmatic dependent launch, sm_90a) give the
//! bits of ordered ones. For every kernel of the table and a few shapes at
//! its head dimension: two problems A and B of the same shape share one
//! output buffer and run overlapped A, B, A, B, .. back to back (nothing
//! synchronizes in between); the buffer must end as B's ordered output, bit
//! for bit. A kernel that wrote before waiting for the one before it would
//! leave some of A's values behind, and `wgmma`'s main kernel that read its
//! K/Vt tiles before its prepass finished would compute from stale tiles.
//!
//! Ignored without a GPU; on a GPU machine:
//! `gpu-bundle/bin/overlap --ignored --nocapture --test-threads=1`.

use kernels_gpu::kernels::{KERNELS, KernelInfo};
use sdpa::quant::random_problem;
use sdpa::{Attention, DeviceOutput, DeviceProblem};

/// `(name, [B, H, S, D], causal)`.
const SHAPES: [(&str, [usize; 4], bool); 4] = [
    ("mission", [2, 8, 256, 64], false),
    ("mission-causal", [2, 8, 256, 64], true),
    ("mission-d128", [2, 8, 256, 128], false),
    ("long-causal", [1, 4, 2048, 128], true),
];
/// Overlapped launches per problem.
const ROUNDS: usize = 6;

/// Uploads the problem of `shape` from `seed` for `kernel`.
fn upload(attn: &Attention, kernel: &'static KernelInfo, shape: [usize; 4], causal: bool, seed: u64) -> DeviceProblem {
    let (q, k, v) = random_problem(shape, shape, seed);
    sdpa_tests::upload_kernel(attn, kernel, (&q, &k, &v), causal).expect("upload")
}

/// The output bits of `out`.
fn bits(attn: &Attention, out: &DeviceOutput) -> Vec<u16> {
    attn.download(out).expect("download").bits
}

#[test]
#[ignore = "needs an NVIDIA GPU with compute capability 9.0 and the sm_90a image; run on a GPU machine (README: GPU tests)"]
fn overlapped_launches_give_the_bits_of_ordered_ones() {
    let attn = Attention::new(0).expect("a GPU for the GPU tests");
    let image = &attn.device().image;
    assert!(image.starts_with("sm_90a"), "overlapped launches need the sm_90a image; this device loaded {image}");
    let mut failures = Vec::new();
    let mut checked = 0;
    for kernel in &KERNELS {
        let runs = |s: &[usize; 4]| s[3] as u32 == kernel.tiles.head_dim && kernel.runs_on(s[2] as u32, s[2] as u32);
        for (name, shape, causal) in SHAPES.into_iter().filter(|(_, s, _)| runs(s)) {
            let (a, b) = (upload(&attn, kernel, shape, causal, 11), upload(&attn, kernel, shape, causal, 12));
            let mut out = attn.alloc_output(&b).expect("alloc");
            attn.poison(&mut out).expect("poison");
            attn.run(&b, &mut out).expect("ordered run of B");
            let ordered = attn.download(&out).expect("download");
            assert!(
                ordered.values().iter().all(|x| x.is_finite()),
                "{} {name}: ordered run is not finite",
                kernel.entry
            );
            let expected = ordered.bits;
            attn.poison(&mut out).expect("poison");
            for _ in 0..ROUNDS {
                attn.run_overlapped(&a, &mut out).expect("overlapped run of A");
                attn.run_overlapped(&b, &mut out).expect("overlapped run of B");
            }
            let got = bits(&attn, &out);
            let differ = got.iter().zip(&expected).filter(|(x, y)| x != y).count();
            checked += 1;
            println!("{} {name}: {differ} of {} elements differ", kernel.entry, got.len());
            if differ > 0 {
                failures.push(format!("{} {name}: {differ} elements differ from the ordered run", kernel.entry));
            }
        }
    }
    println!("{checked} (kernel, shape) pairs checked, {} failed", failures.len());
    assert!(checked > 0, "no kernel ran");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
