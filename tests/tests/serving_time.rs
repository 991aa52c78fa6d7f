//! The serving issue's prefill targets, timed as CUDA-graph replays of 20
//! calls (the bench's method), alternated twice: what the log-sum-exp
//! output costs the `wgmma` kernels at the long record shapes, and a
//! packed batch of 16 sequences of mixed lengths (16384 rows) against one
//! dense sequence of the same causal work; `[B, S, H, D]` tensors against
//! `[B, H, S, D]` at the long record shapes. Prints the figures; judges
//! nothing about speed (speed is the bench's and the lab's, not a test's).
//!
//! Ignored without a GPU; on a GPU machine, alone on it:
//! `gpu-bundle/bin/serving_time --ignored --nocapture --test-threads=1`.

use sdpa::cudarc::driver::{CudaSlice, CudaStream};
use sdpa::device::{DeviceScales, Fp8View, OutputViewMut, PackedSeqs, RunExtras, ScaleLayout};
use sdpa::{Layout, Options, OutputDtype, Variant};
use sdpa_tests::timing::{codes, graph_us, untracked_attention};
use std::sync::Arc;

/// The long record shapes (B, H, S, D) and their masks.
const LONG_RECORD_SHAPES: [([usize; 4], bool); 4] =
    [([4, 16, 4096, 128], false), ([1, 16, 16384, 128], true), ([2, 16, 8192, 64], false), ([4, 16, 2048, 64], false)];

/// Random E4M3 codes of Q, K and V of `shape` on the device, and one scale
/// of 0.05 per head for each.
fn uploaded(stream: &Arc<CudaStream>, shape: [usize; 4]) -> ([CudaSlice<u8>; 3], [CudaSlice<f32>; 3]) {
    let n: usize = shape.iter().product();
    let codes = [1, 2, 3].map(|seed| stream.clone_htod(&codes(n, seed)).expect("upload"));
    let scales = [(); 3].map(|()| stream.clone_htod(&vec![0.05f32; shape[1]]).expect("scales"));
    (codes, scales)
}

#[test]
#[ignore = "needs an NVIDIA GPU with the sm_90a image (Hopper); run on a GPU machine (README: GPU tests)"]
fn lse_output_cost_at_the_long_record_shapes() {
    let (stream, attn) = untracked_attention();
    println!("| variant | shape | no LSE us | LSE us | LSE / none (round 1, 2) |");
    println!("|---|---|---|---|---|");
    for variant in [Variant::Wgmma, Variant::WgmmaFp8Pv] {
        for (shape, causal) in LONG_RECORD_SHAPES {
            let n: usize = shape.iter().product();
            let ([q, k, v], [qs, ks, vs]) = uploaded(&stream, shape);
            let plan =
                attn.plan_shapes(shape, shape, shape, &Options::new().causal(causal).variant(variant)).expect("plan");
            let mut ws = attn.workspace(&plan).expect("workspace");
            let scales = DeviceScales::new(qs.as_view(), ks.as_view(), vs.as_view(), ScaleLayout::PerHead);
            let views = [&q, &k, &v].map(|t| Fp8View::new(t.as_view(), shape).expect("view"));
            let mut o: CudaSlice<u16> = stream.alloc_zeros(n).expect("o");
            let mut lse: CudaSlice<f32> = stream.alloc_zeros(n / shape[3]).expect("lse");
            let mut run = |with_lse: bool| {
                let mut out = OutputViewMut::new(o.as_view_mut(), OutputDtype::F16, shape).expect("out");
                let extras = if with_lse { RunExtras::new().lse(lse.as_view_mut()) } else { RunExtras::new() };
                attn.run_views_with(&plan, &views[0], &views[1], &views[2], &scales, &mut out, &mut ws, extras)
                    .expect("run");
            };
            run(false);
            run(true);
            let mut rounds = Vec::new();
            for _ in 0..2 {
                let none = graph_us(&stream, || run(false));
                let with = graph_us(&stream, || run(true));
                rounds.push((none, with));
            }
            let [(n1, w1), (n2, w2)] = [rounds[0], rounds[1]];
            println!(
                "| {} | {shape:?} causal={causal} | {n1:.1}, {n2:.1} | {w1:.1}, {w2:.1} | {:.3}, {:.3} |",
                variant.name(),
                w1 / n1,
                w2 / n2
            );
        }
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU with the sm_90a image (Hopper); run on a GPU machine (README: GPU tests)"]
fn packed_batch_against_one_dense_sequence_of_the_same_work() {
    let (stream, attn) = untracked_attention();
    // 16 sequences from 88 to 4096 rows, 16384 in all; causal, D = 128.
    let lens = [4096usize, 3000, 2000, 1500, 1200, 1000, 800, 700, 600, 400, 300, 250, 200, 150, 100, 88];
    let (heads, d) = (16, 128);
    let total: usize = lens.iter().sum();
    // Causal work, halved: 2 H D len^2 per sequence.
    let work = |len: usize| 2.0 * (heads * d) as f64 * (len * len) as f64;
    let packed_work: f64 = lens.iter().map(|&l| work(l)).sum();
    // The dense sequence of the same work, rounded to whole 64-row tiles.
    let dense_len = ((lens.iter().map(|&l| l * l).sum::<usize>() as f64).sqrt() / 64.0).round() as usize * 64;
    let cu: Vec<i32> = std::iter::once(0)
        .chain(lens.iter().scan(0i32, |at, &l| {
            *at += l as i32;
            Some(*at)
        }))
        .collect();
    let cu_dev = stream.clone_htod(&cu).expect("cu");
    let max = *lens.iter().max().unwrap();
    println!(
        "| variant | packed us | packed TFLOP/s | dense ({dense_len} rows) us | dense TFLOP/s | packed / dense rate (round 1, 2) |"
    );
    println!("|---|---|---|---|---|---|");
    for variant in [Variant::Wgmma, Variant::WgmmaFp8Pv] {
        let opts = Options::new().causal(true).variant(variant);
        // Packed.
        let n = total * heads * d;
        let [q, k, v] = [1, 2, 3].map(|seed| stream.clone_htod(&codes(n, seed)).expect("upload"));
        let seqs = PackedSeqs::new(cu_dev.as_view(), cu_dev.as_view(), max, max).expect("seqs");
        let shape3 = [total, heads, d];
        let plan = attn.plan_packed(shape3, shape3, shape3, &seqs, &opts).expect("plan_packed");
        let mut ws = attn.workspace(&plan).expect("workspace");
        let scale = || stream.clone_htod(&vec![0.05f32; heads]).expect("scales");
        let (qs, ks, vs) = (scale(), scale(), scale());
        let scales = DeviceScales::new(qs.as_view(), ks.as_view(), vs.as_view(), ScaleLayout::PerHead);
        let views = [&q, &k, &v].map(|t| Fp8View::packed(t.as_view(), shape3).expect("view"));
        let mut o: CudaSlice<u16> = stream.alloc_zeros(n).expect("o");
        let mut run_packed = || {
            let mut out = OutputViewMut::packed(o.as_view_mut(), OutputDtype::F16, shape3).expect("out");
            attn.run_packed(
                &plan,
                &views[0],
                &views[1],
                &views[2],
                &seqs,
                &scales,
                &mut out,
                &mut ws,
                RunExtras::new(),
            )
            .expect("run_packed");
        };
        // Dense.
        let dense_shape = [1, heads, dense_len, d];
        let dn = heads * dense_len * d;
        let [dq, dk, dv] = [4, 5, 6].map(|seed| stream.clone_htod(&codes(dn, seed)).expect("upload"));
        let dense_plan = attn.plan_shapes(dense_shape, dense_shape, dense_shape, &opts).expect("plan");
        let mut dense_ws = attn.workspace(&dense_plan).expect("workspace");
        let dense_views = [&dq, &dk, &dv].map(|t| Fp8View::new(t.as_view(), dense_shape).expect("view"));
        let mut dense_o: CudaSlice<u16> = stream.alloc_zeros(dn).expect("o");
        let mut run_dense = || {
            let mut out = OutputViewMut::new(dense_o.as_view_mut(), OutputDtype::F16, dense_shape).expect("out");
            attn.run_views(
                &dense_plan,
                &dense_views[0],
                &dense_views[1],
                &dense_views[2],
                &scales,
                &mut out,
                &mut dense_ws,
            )
            .expect("run_views");
        };
        run_packed();
        run_dense();
        let mut ratios = Vec::new();
        let (mut packed_us, mut dense_us) = (0.0, 0.0);
        for _ in 0..2 {
            packed_us = graph_us(&stream, &mut run_packed);
            dense_us = graph_us(&stream, &mut run_dense);
            ratios.push((packed_work / packed_us) / (work(dense_len) / dense_us));
        }
        println!(
            "| {} | {packed_us:.1} | {:.0} | {dense_us:.1} | {:.0} | {:.3}, {:.3} |",
            variant.name(),
            packed_work / packed_us * 1e-6,
            work(dense_len) / dense_us * 1e-6,
            ratios[0],
            ratios[1]
        );
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU with the sm_90a image (Hopper); run on a GPU machine (README: GPU tests)"]
fn bshd_against_bhsd_at_the_long_record_shapes() {
    let (stream, attn) = untracked_attention();
    println!("| variant | shape | [B, H, S, D] us | [B, S, H, D] us | bshd / bhsd (round 1, 2) |");
    println!("|---|---|---|---|---|");
    // The long record shapes and a mission shape.
    let shapes = LONG_RECORD_SHAPES.into_iter().chain([([2, 8, 256, 64], false)]);
    for variant in [Variant::Wgmma, Variant::WgmmaFp8Pv] {
        for (shape, causal) in shapes.clone() {
            let n: usize = shape.iter().product();
            let ([q, k, v], [qs, ks, vs]) = uploaded(&stream, shape);
            let scales = DeviceScales::new(qs.as_view(), ks.as_view(), vs.as_view(), ScaleLayout::PerHead);
            let mut o: CudaSlice<u16> = stream.alloc_zeros(n).expect("o");
            let mut time = |layout: Layout| {
                let opts = Options::new().causal(causal).variant(variant).layout(layout);
                let plan = attn.plan_shapes(shape, shape, shape, &opts).expect("plan");
                let mut ws = attn.workspace(&plan).expect("workspace");
                let memory = layout.memory_order(shape);
                let views = [&q, &k, &v].map(|t| match layout {
                    Layout::Bshd => Fp8View::bshd(t.as_view(), memory).expect("view"),
                    _ => Fp8View::new(t.as_view(), shape).expect("view"),
                });
                let mut run = || {
                    let mut out = match layout {
                        Layout::Bshd => OutputViewMut::bshd(o.as_view_mut(), OutputDtype::F16, memory),
                        _ => OutputViewMut::new(o.as_view_mut(), OutputDtype::F16, shape),
                    }
                    .expect("out");
                    attn.run_views(&plan, &views[0], &views[1], &views[2], &scales, &mut out, &mut ws).expect("run");
                };
                run();
                graph_us(&stream, run)
            };
            let rounds: Vec<(f64, f64)> = (0..2).map(|_| (time(Layout::Bhsd), time(Layout::Bshd))).collect();
            let [(a1, b1), (a2, b2)] = [rounds[0], rounds[1]];
            println!(
                "| {} | {shape:?} causal={causal} | {a1:.1}, {a2:.1} | {b1:.1}, {b2:.1} | {:.3}, {:.3} |",
                variant.name(),
                b1 / a1,
                b2 / a2
            );
        }
    }
}
