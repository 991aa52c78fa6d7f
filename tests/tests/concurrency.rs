//! Concurrency and soak on the GPU: threads sharing one `Attention`, and
//! threads each with an `Attention` (and so a stream) of their own, give
//! the bits of a serial run; 10^5 back-to-back calls hold device memory
//! steady and still give the first call's bits; calls the library refuses
//! with a typed error leave it usable, giving the bits of before.
//!
//! Ignored without a GPU; on a GPU machine:
//! `gpu-bundle/bin/concurrency --ignored --nocapture --test-threads=1`.
//! The soak reads the device's free memory, which counts every process on
//! the GPU: run it with the GPU to itself, not beside other suites.

use std::time::Instant;

use sdpa::quant::random_problem;
use sdpa::{Attention, AttnError, Fp8Tensor, Options, Variant};
use sdpa_tests::open_gpu;

/// Threads running the problems at once.
const THREADS: usize = 4;
/// Times each thread runs the whole set of problems.
const ROUNDS: usize = 5;

/// `(variant, [B, H, S, D], causal)`: the `mma` kernels (every image), a
/// `split`-family and a `wgmma`-family variant (sm_90a image only), at both
/// head dimensions, causal and not, with ragged lengths.
const CASES: [(Variant, [usize; 4], bool); 8] = [
    (Variant::Mma, [2, 8, 256, 64], false),
    (Variant::Mma, [1, 4, 333, 128], true),
    (Variant::SplitN64, [2, 8, 256, 64], false),
    (Variant::SplitN64, [1, 4, 1000, 128], true),
    (Variant::Split, [1, 2, 77, 64], true),
    (Variant::Wgmma, [2, 8, 256, 64], true),
    (Variant::Wgmma, [1, 4, 1000, 128], false),
    (Variant::WgmmaFp8Pv, [1, 2, 2100, 128], true),
];

/// One problem of [`CASES`]: its inputs on the host and its options.
struct Problem {
    label: String,
    q: Fp8Tensor,
    k: Fp8Tensor,
    v: Fp8Tensor,
    opts: Options,
}

/// The problems of [`CASES`] whose variant the loaded image has.
fn problems(attn: &Attention) -> Vec<Problem> {
    let available = attn.variants();
    CASES
        .iter()
        .enumerate()
        .filter(|(_, (variant, _, _))| available.contains(variant))
        .map(|(i, &(variant, shape, causal))| {
            let (q, k, v) = random_problem(shape, shape, 11 + i as u64);
            let opts = Options::new().causal(causal).variant(variant);
            Problem { label: format!("{} {shape:?} causal={causal}", variant.name()), q, k, v, opts }
        })
        .collect()
}

/// Runs every problem once on `attn` (plan, upload, a poisoned output, run,
/// download) and returns each output's bits.
fn run_all(attn: &Attention, problems: &[Problem]) -> Vec<Vec<u16>> {
    problems
        .iter()
        .map(|p| {
            let plan = attn.plan(&p.q, &p.k, &p.v, &p.opts).expect("plan");
            let dev = attn.upload(&plan, &p.q, &p.k, &p.v).expect("upload");
            let mut out = attn.alloc_output(&dev).expect("alloc");
            attn.poison(&mut out).expect("poison");
            attn.run(&dev, &mut out).expect("run");
            attn.download(&out).expect("download").bits
        })
        .collect()
}

/// The problems (by label) whose bits in `got` differ from `want`.
fn differences(problems: &[Problem], want: &[Vec<u16>], got: &[Vec<u16>], who: &str) -> Vec<String> {
    problems
        .iter()
        .zip(want.iter().zip(got))
        .filter(|(_, (w, g))| w != g)
        .map(|(p, (w, g))| {
            let n = w.iter().zip(g).filter(|(a, b)| a != b).count();
            format!("{who}: {} differs from the serial run in {n} elements", p.label)
        })
        .collect()
}

/// [`THREADS`] threads run the problems [`ROUNDS`] times each, first all
/// through one shared `Attention` (`Attention` is `Sync`; they then share
/// its one stream, its loaded module and the context, each with inputs and
/// outputs of its own), then each through an `Attention` of its own (its
/// own stream and module, in the device's one primary context). Every
/// output's bits equal the serial run's.
#[test]
#[ignore = "needs an NVIDIA GPU with compute capability 8.9+; run on a GPU machine (README: GPU tests)"]
fn threads_share_one_attention() {
    let attn = open_gpu();
    let problems = problems(&attn);
    assert!(!problems.is_empty(), "no variant of the cases is loaded");
    let want = run_all(&attn, &problems);
    let started = Instant::now();
    let shared: Vec<String> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..THREADS)
            .map(|t| {
                let (attn, problems, want) = (&attn, &problems, &want);
                s.spawn(move || {
                    (0..ROUNDS)
                        .flat_map(|r| {
                            differences(
                                problems,
                                want,
                                &run_all(attn, problems),
                                &format!("shared, thread {t} round {r}"),
                            )
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().expect("a thread panicked")).collect()
    });
    let shared_s = started.elapsed().as_secs_f64();
    let started = Instant::now();
    let own: Vec<String> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..THREADS)
            .map(|t| {
                let (problems, want) = (&problems, &want);
                s.spawn(move || {
                    let mine = Attention::new(0).expect("an Attention per thread");
                    (0..ROUNDS)
                        .flat_map(|r| {
                            differences(
                                problems,
                                want,
                                &run_all(&mine, problems),
                                &format!("own, thread {t} round {r}"),
                            )
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().expect("a thread panicked")).collect()
    });
    let own_s = started.elapsed().as_secs_f64();
    for p in &problems {
        println!("{}", p.label);
    }
    println!(
        "{THREADS} threads x {ROUNDS} rounds x {} problems: shared Attention {shared_s:.2} s, {} differences; \
         an Attention per thread {own_s:.2} s, {} differences",
        problems.len(),
        shared.len(),
        own.len()
    );
    let failures: Vec<String> = shared.into_iter().chain(own).collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Back-to-back calls of the soak.
const SOAK_CALLS: usize = 100_000;
/// Every this many calls, one call through `forward` (allocating its
/// inputs and output, downloading) checks the bits.
const FORWARD_EVERY: usize = 1_000;
/// How far device free memory may move over the soak.
const MEMORY_BOUND: usize = 16 << 20;

/// Free device memory once the stream has drained.
fn free_memory(attn: &Attention) -> usize {
    attn.stream().synchronize().expect("sync");
    attn.stream().context().mem_get_info().expect("mem_get_info").0
}

/// [`SOAK_CALLS`] calls of a small problem (the default variant) on
/// uploaded inputs into one output, with a `forward` (which allocates)
/// every [`FORWARD_EVERY`]: device free memory before and after differs by
/// less than [`MEMORY_BOUND`], and the last output and every `forward`'s
/// equal the first call's bits.
#[test]
#[ignore = "needs an NVIDIA GPU with compute capability 8.9+; run on a GPU machine (README: GPU tests)"]
fn soak_holds_device_memory_steady() {
    let attn = open_gpu();
    let shape = [1, 8, 256, 64];
    let (q, k, v) = random_problem(shape, shape, 5);
    let opts = Options::default();
    let plan = attn.plan(&q, &k, &v, &opts).expect("plan");
    let dev = attn.upload(&plan, &q, &k, &v).expect("upload");
    let mut out = attn.alloc_output(&dev).expect("alloc");
    attn.poison(&mut out).expect("poison");
    attn.run(&dev, &mut out).expect("run");
    let first = attn.download(&out).expect("download").bits;
    // Warm the allocation path once, so that the baseline holds what a
    // `forward` keeps (e.g. a memory pool's first growth).
    assert_eq!(attn.forward(&q, &k, &v, &opts).expect("forward").bits, first, "forward differs from run");
    let before = free_memory(&attn);

    let started = Instant::now();
    let mut forwards = 0;
    for call in 1..=SOAK_CALLS {
        if call % FORWARD_EVERY == 0 {
            let bits = attn.forward(&q, &k, &v, &opts).expect("forward").bits;
            assert_eq!(bits, first, "forward at call {call} differs from the first call");
            forwards += 1;
        } else {
            attn.run(&dev, &mut out).expect("run");
        }
    }
    let last = attn.download(&out).expect("download").bits;
    let seconds = started.elapsed().as_secs_f64();
    let after = free_memory(&attn);

    let moved = before.abs_diff(after);
    println!(
        "{} {shape:?}: {SOAK_CALLS} calls ({forwards} through forward) in {seconds:.2} s, {:.0} calls/s; \
         free device memory {} MiB before, {} MiB after ({moved} bytes apart)",
        plan.kernel().entry,
        SOAK_CALLS as f64 / seconds,
        before >> 20,
        after >> 20
    );
    assert_eq!(last, first, "the output after the soak differs from the first call's");
    assert!(moved < MEMORY_BOUND, "free device memory moved by {moved} bytes (bound {MEMORY_BOUND})");
}

/// Calls the library refuses with a typed error (an output buffer of
/// another problem, inputs uploaded against another problem's plan, a
/// kernel for another head dimension, and, off the sm_90a image, an
/// overlapped launch), each followed by a normal call on the same
/// `Attention`, inputs and output: it gives the bits of before. (A fault
/// on the device would poison the context; nothing here provokes one.)
#[test]
#[ignore = "needs an NVIDIA GPU with compute capability 8.9+; run on a GPU machine (README: GPU tests)"]
fn a_failed_call_leaves_the_library_usable() {
    let attn = open_gpu();
    let shape = [2, 8, 256, 64];
    let (q, k, v) = random_problem(shape, shape, 3);
    let opts = Options::default();
    let plan = attn.plan(&q, &k, &v, &opts).expect("plan");
    let dev = attn.upload(&plan, &q, &k, &v).expect("upload");
    let mut out = attn.alloc_output(&dev).expect("alloc");
    let mut run = || {
        attn.poison(&mut out).expect("poison");
        attn.run(&dev, &mut out).expect("run after a failure");
        attn.download(&out).expect("download").bits
    };
    let want = run();

    let other_shape = [1, 4, 100, 128];
    let (oq, ok, ov) = random_problem(other_shape, other_shape, 4);
    let other_plan = attn.plan(&oq, &ok, &ov, &opts).expect("plan the other problem");
    let other = attn.upload(&other_plan, &oq, &ok, &ov).expect("upload the other problem");

    let mut failures: Vec<(&str, AttnError)> = Vec::new();
    let mut wrong_out = attn.alloc_output(&other).expect("alloc");
    let err = attn.run(&dev, &mut wrong_out).expect_err("an output of another problem");
    assert!(matches!(err, AttnError::ShapeMismatch(_)), "{err}");
    failures.push(("output of another problem", err));
    assert_eq!(run(), want, "after the wrong output");

    let Err(err) = attn.upload(&other_plan, &q, &k, &v) else { panic!("inputs against another plan") };
    assert!(matches!(err, AttnError::NotPlanned(_)), "{err}");
    failures.push(("inputs against another plan", err));
    assert_eq!(run(), want, "after the wrong plan");

    let d128 = other_plan.kernel();
    let err = plan.clone().with_kernel(d128).expect_err("a D = 128 kernel for a D = 64 problem");
    assert!(matches!(err, AttnError::KernelMismatch { .. }), "{err}");
    failures.push(("kernel of another head dimension", err));
    assert_eq!(run(), want, "after the wrong kernel");

    let mut out_for_overlap = attn.alloc_output(&dev).expect("alloc");
    match attn.run_overlapped(&dev, &mut out_for_overlap) {
        Err(err) => {
            assert!(matches!(err, AttnError::VariantUnavailable { .. }), "{err}");
            failures.push(("overlapped launch off sm_90a", err));
        }
        Ok(()) => assert_eq!(attn.download(&out_for_overlap).expect("download").bits, want, "overlapped run"),
    }
    assert_eq!(run(), want, "after the overlapped launch");
    assert_eq!(attn.forward(&q, &k, &v, &opts).expect("forward").bits, want, "forward after the failures");

    for (what, err) in &failures {
        println!("{what}: {err}");
    }
    println!("{} refused calls, each followed by a call with the bits of before", failures.len());
}
