//! Determinism on the GPU: for every kernel of the table and a few shapes
//! at its head dimension (mission, mission causal, mission at D = 128, odd
//! causal D = 128, GQA), ten runs in one process give bit-identical outputs
//! (each run on a freshly poisoned buffer), and a second process gives the
//! same bits: the test runs its own executable again with
//! `SDPA_DETERMINISM_CHILD=1`, which prints one FNV-1a hash of the f16
//! output bits per (kernel, shape), and compares them with its own.
//!
//! Ignored without a GPU; on a GPU machine:
//! `gpu-bundle/bin/determinism --ignored --nocapture --test-threads=1`.

use std::collections::BTreeMap;
use std::process::Command;

use kernels_gpu::kernels::{KERNELS, KernelInfo};
use sdpa::Attention;
use sdpa::quant::random_problem;
use sdpa_tests::adversarial::unavailable;
use sdpa_tests::upload_kernel;

/// Set in the child process: print the hashes and stop.
const CHILD_ENV: &str = "SDPA_DETERMINISM_CHILD";
/// The name of the test (the child runs exactly this one).
const TEST_NAME: &str = "every_kernel_is_bit_identical_across_runs_and_processes";
/// Runs per (kernel, shape) in the parent.
const RUNS: usize = 10;

/// `(name, [B, Hq, Hkv, S, D], causal)`.
const SHAPES: [(&str, [usize; 5], bool); 5] = [
    ("mission", [2, 8, 8, 256, 64], false),
    ("mission-causal", [2, 8, 8, 256, 64], true),
    ("mission-d128", [2, 8, 8, 256, 128], false),
    ("odd-causal", [1, 4, 4, 77, 128], true),
    ("gqa", [2, 8, 2, 256, 64], false),
];

/// FNV-1a (64-bit) over the little-endian f16 bits.
fn fnv1a(bits: impl Iterator<Item = u16>) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bits.flat_map(u16::to_le_bytes) {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// Runs `kernel` on `shape` `runs` times (poisoning before each) and returns
/// the output bits of each run; `None` when the device cannot run it.
fn outputs(
    attn: &Attention,
    kernel: &'static KernelInfo,
    shape: [usize; 5],
    causal: bool,
    runs: usize,
) -> Option<Vec<Vec<u16>>> {
    let [b, hq, hkv, s, d] = shape;
    if d as u32 != kernel.tiles.head_dim || !kernel.runs_on(s as u32, s as u32) {
        return None;
    }
    let (q, k, v) = random_problem([b, hq, s, d], [b, hkv, s, d], 7);
    let dev = upload_kernel(attn, kernel, (&q, &k, &v), causal).expect("upload");
    let mut out = attn.alloc_output(&dev).expect("alloc");
    let mut all = Vec::with_capacity(runs);
    for _ in 0..runs {
        attn.poison(&mut out).expect("poison");
        match attn.run(&dev, &mut out) {
            Err(e) if unavailable(&e) => return None,
            r => r.expect("run"),
        }
        let o = attn.download(&out).expect("download");
        assert!(o.values().iter().all(|x| x.is_finite()), "{} produced a non-finite value", kernel.entry);
        all.push(o.bits);
    }
    Some(all)
}

/// `"<entry> <shape>"` -> hash, for every kernel the device runs at `runs`
/// runs each (checking the runs agree bit for bit).
fn hashes(attn: &Attention, runs: usize) -> (BTreeMap<String, u64>, Vec<String>) {
    let mut map = BTreeMap::new();
    let mut failures = Vec::new();
    for kernel in &KERNELS {
        for (name, shape, causal) in SHAPES {
            let Some(outs) = outputs(attn, kernel, shape, causal, runs) else { continue };
            let first = &outs[0];
            for (i, o) in outs.iter().enumerate().skip(1) {
                let differ = o.iter().zip(first).filter(|(a, b)| a != b).count();
                if differ > 0 {
                    failures.push(format!("{} {name}: run {i} differs from run 0 in {differ} elements", kernel.entry));
                }
            }
            map.insert(format!("{} {name}", kernel.entry), fnv1a(first.iter().copied()));
        }
    }
    (map, failures)
}

#[test]
#[ignore = "needs an NVIDIA GPU with compute capability 8.9+; run on a GPU machine (README: GPU tests)"]
fn every_kernel_is_bit_identical_across_runs_and_processes() {
    let attn = Attention::new(0).expect("a GPU for the GPU tests");
    if std::env::var_os(CHILD_ENV).is_some() {
        for (key, h) in hashes(&attn, 1).0 {
            println!("hash {key} {h:016x}");
        }
        return;
    }
    let (mine, mut failures) = hashes(&attn, RUNS);
    assert!(!mine.is_empty(), "no kernel ran");
    println!("{} (kernel, shape) pairs, {RUNS} runs each", mine.len());

    let exe = std::env::current_exe().expect("the test executable's path");
    let child = Command::new(&exe)
        .args(["--ignored", "--exact", TEST_NAME, "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, "1")
        .output()
        .expect("start the child process");
    let stdout = String::from_utf8_lossy(&child.stdout);
    assert!(
        child.status.success(),
        "child failed ({}):\n{stdout}\n{}",
        child.status,
        String::from_utf8_lossy(&child.stderr)
    );
    // libtest prints "test <name> ... " without a newline before the
    // child's first line, so a hash may start mid-line: split on the marker.
    let theirs: BTreeMap<String, u64> = stdout
        .lines()
        .filter_map(|l| l.split_once("hash ").map(|(_, rest)| rest))
        .filter_map(|l| l.rsplit_once(' '))
        .map(|(key, h)| (key.to_string(), u64::from_str_radix(h, 16).expect("a hex hash")))
        .collect();
    for (key, h) in &mine {
        match theirs.get(key) {
            Some(t) if t == h => println!("{key}: {h:016x} in both processes"),
            Some(t) => failures.push(format!("{key}: {h:016x} here, {t:016x} in the child process")),
            None => failures.push(format!("{key}: no hash from the child process")),
        }
    }
    assert_eq!(mine.len(), theirs.len(), "the child hashed other pairs:\n{stdout}");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
