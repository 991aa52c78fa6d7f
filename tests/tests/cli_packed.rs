//! The CLI's packed batches on a GPU. `sdpa run` on a file with
//! `cu_seqlens_q`, `cu_seqlens_k` and rank-3 `q`, `k`, `v`, end to end:
//! sequences empty, of one row, around the 64-key tile and the 128/192-row
//! query blocks, keys longer and shorter than queries, one with no keys;
//! causal and not, `wgmma` and `wgmma-fp8pv`, GQA; each sequence's output
//! and log-sum-exp (`--lse`) against the f64 reference of its own rows.
//! `sdpa bench --packed`: the packed rows beside the dense ones, checked.
//!
//! It runs the `sdpa` executable: `$SDPA_BIN`, else the one beside this
//! test executable (a GPU bundle's `bin/`), else the one in the cargo
//! profile directory above it (`cargo build --release -p sdpa` first).
//! Ignored without a GPU; on a GPU machine:
//! `gpu-bundle/bin/cli_packed --ignored --nocapture --test-threads=1`.

use std::path::Path;
use std::process::Command;

use sdpa::io::{PackedBatch, PackedCodes, PackedOutput, load_packed_output, save_packed_inputs};
use sdpa::metrics::{Tolerance, compare};
use sdpa::quant::{Rotation, ScaleGroup, SplitMix64, from_codes, normal_values, quantize_as_gpu, random_problem};
use sdpa::reference::{attention_f64, log_sum_exp_f64};
use sdpa::tensor::to_f32;
use sdpa::{Fp8Tensor, Variant};
use sdpa_tests::cli::{TempPath, sdpa_cli};
use sdpa_tests::lse;
use sdpa_tests::packing::{packed_codes, rows_of};

/// `[rows, H, D]` codes with per-head scales as a one-batch `[1, H, rows,
/// D]` tensor (heads first, as the reference reads them).
fn heads_first(codes: &[u8], [rows, heads, d]: [usize; 3], scales: Vec<f32>) -> Fp8Tensor {
    let data =
        (0..heads).flat_map(|h| (0..rows).flat_map(move |r| &codes[(r * heads + h) * d..][..d])).copied().collect();
    from_codes(data, [1, heads, rows, d], scales)
}

/// A safetensors file of `F32` tensors `(name, shape, values)` and `I32`
/// tensors `(name, values)` (rank 1), written byte by byte.
fn write_float_file(path: &Path, floats: &[(&str, [usize; 3], &[f32])], ints: &[(&str, &[i32])]) {
    let (mut header, mut data) = (Vec::new(), Vec::<u8>::new());
    for (name, shape, values) in floats {
        let start = data.len();
        data.extend(values.iter().flat_map(|x| x.to_le_bytes()));
        let dims = shape.map(|d| d.to_string()).join(",");
        header.push(format!(r#""{name}":{{"dtype":"F32","shape":[{dims}],"data_offsets":[{start},{}]}}"#, data.len()));
    }
    for (name, values) in ints {
        let start = data.len();
        data.extend(values.iter().flat_map(|x| x.to_le_bytes()));
        let n = values.len();
        header.push(format!(r#""{name}":{{"dtype":"I32","shape":[{n}],"data_offsets":[{start},{}]}}"#, data.len()));
    }
    let header = format!("{{{}}}", header.join(","));
    let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
    bytes.extend_from_slice(header.as_bytes());
    bytes.extend_from_slice(&data);
    std::fs::write(path, bytes).expect("write the float file");
}

/// Runs `sdpa run --lse` on `input` with `extra` arguments, expecting
/// success and `variant` in its report; returns the output file's tensors.
fn run(input: &TempPath, extra: &[&str], variant: Variant) -> PackedOutput {
    let output = TempPath::new("out");
    let o = Command::new(sdpa_cli())
        .args(["run", "--lse", "--input"])
        .arg(&input.0)
        .arg("--output")
        .arg(&output.0)
        .args(extra)
        .output()
        .expect("the sdpa binary runs");
    let (stdout, stderr) = (String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert!(o.status.success(), "sdpa run failed ({:?}): {stderr}", o.status);
    let ran = format!("variant {} ", variant.name());
    assert!(stdout.contains(&ran) && stdout.contains("packed batch") && stdout.contains("(o, lse)"), "{stdout}");
    load_packed_output(&output.0).expect("o and lse")
}

/// Checks each sequence of a packed run's output (`o` and `lse`) against
/// the f64 reference of its own rows of `q`, `k`, `v` (one-batch tensors
/// `[1, H, total, D]`, the sequences back to back).
fn check_sequences(
    out: &PackedOutput,
    (q, k, v): (&Fp8Tensor, &Fp8Tensor, &Fp8Tensor),
    batch: &PackedBatch,
    causal: bool,
    variant: Variant,
) {
    let ([_, heads_q, _, head_dim], [_, heads_kv, _, _]) = (q.shape, k.shape);
    let lse = out.lse.as_ref().expect("lse");
    let scale = 1.0 / (head_dim as f64).sqrt();
    let tolerance = Tolerance::of(variant);
    let what = |b: usize| format!("{} causal={causal} D={head_dim} {heads_q}:{heads_kv} sequence {b}", variant.name());
    for (b, (sq, skv)) in batch.lengths().enumerate() {
        let (q0, k0) = (batch.cu_seqlens_q[b] as usize, batch.cu_seqlens_k[b] as usize);
        if sq == 0 {
            continue;
        }
        let (qb, kb, vb) = (rows_of(q, q0, sq), rows_of(k, k0, skv), rows_of(v, k0, skv));
        let want =
            if skv == 0 { vec![0.0; heads_q * sq * head_dim] } else { attention_f64(&qb, &kb, &vb, causal, scale) };
        // The file's rows of this sequence, as `[Hq, Sq, D]` like the reference.
        let got: Vec<f32> = (0..heads_q)
            .flat_map(|h| {
                (0..sq).flat_map(move |i| (0..head_dim).map(move |c| ((q0 + i) * heads_q + h) * head_dim + c))
            })
            .map(|at| to_f32(out.dtype, out.bits[at]))
            .collect();
        let stats = compare(&got, &want, tolerance.max_abs);
        let zeros_exact = skv > 0 || got.iter().all(|&x| x == 0.0);
        assert!(tolerance.passes(&stats) && zeros_exact, "{}: {stats}", what(b));
        for h in 0..heads_q {
            for i in 0..sq {
                let got = lse[(q0 + i) * heads_q + h] as f64;
                let want = if skv == 0 { f64::NEG_INFINITY } else { log_sum_exp_f64(&qb, &kb, h, i, causal, scale) };
                let close = lse::close(got, want, 0.0);
                assert!(close, "{}: row ({h}, {i}) log-sum-exp {got}, f64 {want}", what(b));
            }
        }
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU with the sm_90a image (Hopper) and the sdpa executable; run on a GPU machine (README: GPU tests)"]
fn sdpa_run_on_a_packed_file_matches_the_f64_reference_per_sequence() {
    // Empty, one row, around the 64-key tile and the 128/192-row blocks,
    // keys longer and shorter than queries, and a sequence with no keys.
    let lens_q = [0usize, 1, 63, 64, 65, 191, 192, 193, 5, 40];
    let lens_k = [7usize, 1, 63, 64, 65, 191, 192, 300, 0, 20];
    let batch = PackedBatch::from_lengths(&lens_q, &lens_k).expect("prefix sums");
    let [total_q, total_k] = batch.totals();
    for (variant, causal, head_dim, heads_q, heads_kv) in [
        (Variant::Wgmma, true, 128, 8, 2),
        (Variant::Wgmma, false, 64, 4, 4),
        (Variant::WgmmaFp8Pv, true, 64, 6, 2),
        (Variant::WgmmaFp8Pv, false, 128, 4, 1),
    ] {
        let (q, k, v) = random_problem([1, heads_q, total_q, head_dim], [1, heads_kv, total_k, head_dim], 7);
        let input = TempPath::new("in");
        let (qc, kc, vc) = (packed_codes(&q), packed_codes(&k), packed_codes(&v));
        let (q_shape, kv_shape) = ([total_q, heads_q, head_dim], [total_k, heads_kv, head_dim]);
        save_packed_inputs(
            &input.0,
            [
                PackedCodes { codes: &qc, shape: q_shape, scales: &q.scales },
                PackedCodes { codes: &kc, shape: kv_shape, scales: &k.scales },
                PackedCodes { codes: &vc, shape: kv_shape, scales: &v.scales },
            ],
            &batch,
        )
        .expect("save");
        let mut extra = vec!["--variant", variant.name()];
        if causal {
            extra.push("--causal");
        }
        let out = run(&input, &extra, variant);
        assert_eq!(out.shape, q_shape);
        let lse = out.lse.as_ref().expect("lse");
        assert_eq!(lse.len(), total_q * heads_q);

        check_sequences(&out, (&q, &k, &v), &batch, causal, variant);
        println!(
            "sdpa run, packed {} causal={causal} D={head_dim} Hq:Hkv {heads_q}:{heads_kv}: {} sequences ({total_q} queries, {total_k} keys) within the tolerance of f64, o and lse",
            variant.name(),
            lens_q.len()
        );
    }
}

/// `sdpa bench --packed`: a `packed:N` row per packed variant and mode,
/// each checked against f64 per sequence ("ok"), beside the dense rows.
#[test]
#[ignore = "needs an NVIDIA GPU with the sm_90a image (Hopper) and the sdpa executable; run on a GPU machine (README: GPU tests)"]
fn sdpa_bench_times_packed_batches_checked_per_sequence() {
    let o = Command::new(sdpa_cli())
        .args(["bench", "--shapes", "1,8:2,1000,128,causal", "2,4,300,64", "--variants", "wgmma,wgmma-fp8pv"])
        .args(["--packed", "0,1,63,64,65,191,192,193,700", "--samples", "3", "--launches", "4"])
        .output()
        .expect("the sdpa binary runs");
    let (stdout, stderr) = (String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert!(o.status.success(), "sdpa bench failed ({:?}): {stderr}", o.status);
    print!("{stdout}");
    assert!(stdout.contains("packed rows: 9 sequences of 0 to 700 rows, 1469 in all"), "{stdout}");
    for (shape, cache) in [
        ("9,8:2,<=700,128,causal", "packed:9"),
        ("9,4,<=700,64", "packed:9"),
        ("1,8:2,1000,128,causal", "contig"),
        ("2,4,300,64", "contig"),
    ] {
        for variant in ["wgmma", "wgmma-fp8pv"] {
            for mode in ["graph", "direct"] {
                let row = stdout.lines().find(|l| {
                    let f: Vec<&str> = l.split_whitespace().collect();
                    f.len() > 3 && f[0] == variant && f[1] == shape && f[2] == cache && f[3] == mode
                });
                let row = row.unwrap_or_else(|| panic!("no {variant} {shape} {cache} {mode} row in:\n{stdout}"));
                assert!(row.ends_with(" ok"), "{row}");
            }
        }
    }
}

/// Float q, k, v `[rows, H, D]`: `sdpa run` quantizes them on the GPU per
/// head over every row (with and without the Hadamard rotation of q and
/// k), which gives the codes the CPU's `quantize_as_gpu` gives for `[rows,
/// H, 1, D]`; each sequence is checked against the f64 reference on those.
#[test]
#[ignore = "needs an NVIDIA GPU with the sm_90a image (Hopper) and the sdpa executable; run on a GPU machine (README: GPU tests)"]
fn sdpa_run_quantizes_a_float_packed_file_per_head() {
    let lens = [130usize, 0, 64, 257, 1];
    let batch = PackedBatch::from_lengths(&lens, &lens).expect("prefix sums");
    let [total, _] = batch.totals();
    let (heads_q, heads_kv, head_dim) = (8, 2, 128);
    let mut rng = SplitMix64::new(11);
    let mut normal = |n: usize| normal_values(n, true, &mut rng);
    let (q, k, v) =
        (normal(total * heads_q * head_dim), normal(total * heads_kv * head_dim), normal(total * heads_kv * head_dim));
    let (q_shape, kv_shape) = ([total, heads_q, head_dim], [total, heads_kv, head_dim]);
    let input = TempPath::new("float");
    write_float_file(
        &input.0,
        &[("q", q_shape, &q), ("k", kv_shape, &k), ("v", kv_shape, &v)],
        &[("cu_seqlens_q", &batch.cu_seqlens_q), ("cu_seqlens_k", &batch.cu_seqlens_k)],
    );
    for rotation in [Rotation::None, Rotation::Hadamard] {
        let as_gpu = |name: &str, values: &[f32], [rows, heads, d]: [usize; 3], rotation| {
            let (codes, scales) =
                quantize_as_gpu(name, values, [rows, heads, 1, d], rotation, ScaleGroup::PerHead).expect("quantizes");
            heads_first(&codes, [rows, heads, d], scales)
        };
        let (qt, kt, vt) = (
            as_gpu("q", &q, q_shape, rotation),
            as_gpu("k", &k, kv_shape, rotation),
            as_gpu("v", &v, kv_shape, Rotation::None),
        );
        let mut extra = vec!["--causal"];
        if rotation == Rotation::Hadamard {
            extra.push("--hadamard");
        }
        let out = run(&input, &extra, Variant::Wgmma);
        check_sequences(&out, (&qt, &kt, &vt), &batch, true, Variant::Wgmma);
        println!("sdpa run, packed float input ({rotation:?}): {} sequences within the tolerance of f64", lens.len());
    }
}
