//! The executable compute-sanitizer runs (`cargo xtask sanitize`,
//! `scripts/sanitize.sh`): every kernel of the table (each variant at each
//! head dimension, writing f16 and bf16) once on the mission shape (B=2, H=8, S=256), an odd
//! causal shape (B=1, H=4, Sq=Skv=77), a GQA shape (B=2, Hq=8, Hkv=2,
//! S=256) and a causal decoding one (B=1, Hq=8, Hkv=2, Sq=5, Skv=1000), at the kernel's own D (so the mission D=64, odd D=128
//! and GQA D=64 are among them), each into a poisoned output and checked
//! against the f64 reference with the gate's tolerance, so a run under the
//! sanitizer also shows that the launches did their work.
//!
//! Ignored without a GPU; on a GPU machine: `bash scripts/sanitize.sh`, or by
//! hand `compute-sanitizer --tool memcheck --error-exitcode 1
//! gpu-bundle/bin/sanitize_target --ignored --test-threads=1`.

use kernels_gpu::kernels::KERNELS;
use sdpa::Attention;
use sdpa::metrics::{Tolerance, compare};
use sdpa::quant::random_problem;
use sdpa::reference::attention_f64;
use sdpa_tests::adversarial::unavailable;

/// `(name, [B, Hq, Hkv, Sq, Skv], causal)`; D is the kernel's.
const SHAPES: [(&str, [usize; 5], bool); 4] = [
    ("mission", [2, 8, 8, 256, 256], false),
    ("odd-causal", [1, 4, 4, 77, 77], true),
    ("gqa", [2, 8, 2, 256, 256], false),
    // `decode` splits these keys four ways and merges them.
    ("decode-causal", [1, 8, 2, 5, 1000], true),
];

#[test]
#[ignore = "needs an NVIDIA GPU with compute capability 8.9+; run on a GPU machine (README: GPU tests)"]
fn every_kernel_once_per_shape() {
    let attn = Attention::new(0).expect("a GPU for the GPU tests");
    let info = attn.device();
    println!("device: {} (cc {}.{}), image {}", info.name, info.capability.0, info.capability.1, info.image);
    let mut failures = Vec::new();
    let mut launches = 0;
    for kernel in &KERNELS {
        let d = kernel.tiles.head_dim as usize;
        for (name, [b, hq, hkv, sq, skv], causal) in SHAPES {
            if !kernel.runs_on(sq as u32, skv as u32) {
                println!("{} {name}: skipped (not its lengths)", kernel.entry);
                continue;
            }
            let (q, k, v) = random_problem([b, hq, sq, d], [b, hkv, skv, d], 3);
            let dev = sdpa_tests::upload_kernel(&attn, kernel, (&q, &k, &v), causal).expect("upload");
            let mut out = attn.alloc_output(&dev).expect("alloc");
            attn.poison(&mut out).expect("poison");
            match attn.run(&dev, &mut out) {
                Err(e) if unavailable(&e) => {
                    println!("{} {name}: skipped ({e})", kernel.entry);
                    continue;
                }
                r => r.expect("launch"),
            }
            let o = attn.download(&out).expect("download");
            launches += 1;
            let reference = attention_f64(&q, &k, &v, causal, dev.plan().problem().softmax_scale as f64);
            let gate = Tolerance::of(kernel.variant);
            let stats = compare(&o.values(), &reference, gate.max_abs);
            let verdict = if gate.passes(&stats) { "ok" } else { "FAIL" };
            println!("{} {name}: {stats} {verdict}", kernel.entry);
            if !gate.passes(&stats) {
                failures.push(format!("{} {name}: {stats}", kernel.entry));
            }
        }
    }
    println!("{launches} launches");
    assert!(launches > 0, "no kernel ran");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
