//! Packed batches in `sdpa run`'s files without a GPU: `cu_seqlens_q`,
//! `cu_seqlens_k` with rank-3 `q`, `k`, `v` written and read back (codes
//! and floats), the packed output and its log-sum-exp written and read
//! back; every malformed prefix sum, shape and dtype refused by the reader
//! with a typed error and by the CLI with exit code 2 and one line, before
//! any GPU work; a variant other than the `wgmma` ones refused.

use safetensors::{Dtype, tensor::TensorView};
use sdpa::io::{
    InputTensor, IoError, OutputFile, PackedBatch, PackedCodes, PackedOutput, load_inputs, load_packed_output,
    load_raw_inputs, save_packed_inputs,
};
use sdpa::quant::{Rotation, ScaleGroup, scales_as_gpu};
use sdpa::tensor::Fp8Input;
use sdpa::validate::{Problem, validate};
use sdpa::{AttnError, Options, OutputDtype};

mod common;
use common::{TempPath, f32_bytes, i32_bytes, reaches_the_gpu, sdpa};

// The batch: three sequences of (3, 5), (0, 2) and (4, 4) queries and keys;
// Hq = 4, Hkv = 2, D = 64.
const CU_Q: [i32; 4] = [0, 3, 3, 7];
const CU_K: [i32; 4] = [0, 5, 7, 11];
const TOTAL_Q: usize = 7;
const TOTAL_K: usize = 11;
const HEADS_Q: usize = 4;
const HEADS_KV: usize = 2;
const HEAD_DIM: usize = 64;

/// One tensor of a file: name, dtype, shape, bytes.
type Tensor = (String, Dtype, Vec<usize>, Vec<u8>);

/// Deterministic E4M3 codes (finite, small).
fn codes(n: usize, seed: u8) -> Vec<u8> {
    (0..n).map(|i| (i as u8).wrapping_mul(seed) & 0x3F).collect()
}

/// The tensors of a valid packed file: E4M3 `q` `[7, 4, 64]`, `k`, `v`
/// `[11, 2, 64]` with their scales, and the prefix sums.
fn tensors() -> Vec<Tensor> {
    let (q_len, kv_len) = (TOTAL_Q * HEADS_Q * HEAD_DIM, TOTAL_K * HEADS_KV * HEAD_DIM);
    vec![
        ("q".into(), Dtype::F8_E4M3, vec![TOTAL_Q, HEADS_Q, HEAD_DIM], codes(q_len, 7)),
        ("k".into(), Dtype::F8_E4M3, vec![TOTAL_K, HEADS_KV, HEAD_DIM], codes(kv_len, 11)),
        ("v".into(), Dtype::F8_E4M3, vec![TOTAL_K, HEADS_KV, HEAD_DIM], codes(kv_len, 13)),
        ("q_scale".into(), Dtype::F32, vec![HEADS_Q], f32_bytes(&[0.05, 0.06, 0.07, 0.08])),
        ("k_scale".into(), Dtype::F32, vec![HEADS_KV], f32_bytes(&[0.04, 0.03])),
        ("v_scale".into(), Dtype::F32, vec![HEADS_KV], f32_bytes(&[0.02, 0.01])),
        ("cu_seqlens_q".into(), Dtype::I32, vec![4], i32_bytes(&CU_Q)),
        ("cu_seqlens_k".into(), Dtype::I32, vec![4], i32_bytes(&CU_K)),
    ]
}

/// `t` with tensor `name` replaced (or added).
fn with(mut t: Vec<Tensor>, name: &str, dtype: Dtype, shape: Vec<usize>, bytes: Vec<u8>) -> Vec<Tensor> {
    t.retain(|(n, ..)| n != name);
    t.push((name.to_string(), dtype, shape, bytes));
    t
}

/// `t` without tensor `name`.
fn without(mut t: Vec<Tensor>, name: &str) -> Vec<Tensor> {
    t.retain(|(n, ..)| n != name);
    t
}

/// A file holding `tensors`.
fn file(tensors: &[Tensor]) -> TempPath {
    let views: Vec<(&str, TensorView)> = tensors
        .iter()
        .map(|(name, dtype, shape, bytes)| (name.as_str(), TensorView::new(*dtype, shape.clone(), bytes).unwrap()))
        .collect();
    let path = TempPath::new("in");
    std::fs::write(&path.0, safetensors::serialize(views, None).unwrap()).unwrap();
    path
}

/// The CLI exits 2 on `input` with one line holding `needle`, writing
/// nothing.
fn cli_refuses(input: &TempPath, extra: &[&str], needle: &str) {
    let output = TempPath::new("out");
    let mut args = vec!["run", "--input", input.as_str(), "--output", output.as_str()];
    args.extend_from_slice(extra);
    let o = sdpa(&args);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr:?}");
    assert!(stderr.starts_with("error: ") && stderr.contains(needle), "{needle:?} not in {stderr:?}");
    assert!(!output.0.exists(), "an output was written");
}

/// `sdpa run`'s reader refuses the file with an error holding `needle`,
/// and the CLI exits 2 with that one line, writing nothing.
fn refused(tensors: &[Tensor], needle: &str) -> IoError {
    let input = file(tensors);
    let err = load_raw_inputs(&input.0, Rotation::None).expect_err("the file should be refused");
    let msg = err.to_string();
    assert!(msg.contains(needle) && msg.starts_with(input.as_str()), "{needle:?} not in {msg:?}");
    assert!(!msg.contains('\n'), "{msg:?}");
    cli_refuses(&input, &[], needle);
    err
}

#[test]
fn a_packed_file_reads_as_rows_of_heads_with_its_prefix_sums() {
    let input = file(&tensors());
    let raw = load_raw_inputs(&input.0, Rotation::None).expect("a valid packed file");
    let batch = raw.packed.as_ref().expect("the prefix sums");
    assert_eq!((batch.cu_seqlens_q.as_slice(), batch.cu_seqlens_k.as_slice()), (&CU_Q[..], &CU_K[..]));
    assert_eq!((batch.batch(), batch.max_seqlen(), batch.totals()), (3, [4, 5], [TOTAL_Q, TOTAL_K]));
    assert_eq!(batch.lengths().collect::<Vec<_>>(), [(3, 5), (0, 2), (4, 4)]);
    assert!(raw.decode.is_empty());
    assert_eq!(raw.q.shape(), [TOTAL_Q, HEADS_Q, 1, HEAD_DIM]);
    assert_eq!(raw.k.shape(), [TOTAL_K, HEADS_KV, 1, HEAD_DIM]);
    assert_eq!(raw.v.scales(), [0.02, 0.01]);
    // Validated as the grid of the longest sequences, B = 3.
    let [q, k, v] = raw.planned();
    assert_eq!((q.shape(), k.shape()), ([3, HEADS_Q, 4, HEAD_DIM], [3, HEADS_KV, 5, HEAD_DIM]));
    let p = validate(&q, &k, &v, &Options::new().causal(true)).expect("validates");
    assert_eq!(p.scales, [0.05, 0.06, 0.07, 0.08, 0.04, 0.03, 0.02, 0.01]);
    let packed = Problem::packed(
        [TOTAL_Q, HEADS_Q, HEAD_DIM],
        [TOTAL_K, HEADS_KV, HEAD_DIM],
        [TOTAL_K, HEADS_KV, HEAD_DIM],
        3,
        [4, 5],
        &Options::new(),
    )
    .expect("plans");
    assert_eq!(packed.packed_shapes(), Some(([1, TOTAL_Q, HEADS_Q, HEAD_DIM], [1, TOTAL_K, HEADS_KV, HEAD_DIM])));
}

#[test]
fn packed_files_round_trip() {
    let batch = PackedBatch::from_lengths(&[3, 0, 4], &[5, 2, 4]).unwrap();
    assert_eq!((batch.cu_seqlens_q.as_slice(), batch.cu_seqlens_k.as_slice()), (&CU_Q[..], &CU_K[..]));
    let (q, k, v) = (
        codes(TOTAL_Q * HEADS_Q * HEAD_DIM, 3),
        codes(TOTAL_K * HEADS_KV * HEAD_DIM, 5),
        codes(TOTAL_K * HEADS_KV * HEAD_DIM, 9),
    );
    let (qs, kvs) = ([0.5f32, 0.25, 0.125, 1.0], [2.0f32, 0.75]);
    let input = TempPath::new("saved");
    save_packed_inputs(
        &input.0,
        [
            PackedCodes { codes: &q, shape: [TOTAL_Q, HEADS_Q, HEAD_DIM], scales: &qs },
            PackedCodes { codes: &k, shape: [TOTAL_K, HEADS_KV, HEAD_DIM], scales: &kvs },
            PackedCodes { codes: &v, shape: [TOTAL_K, HEADS_KV, HEAD_DIM], scales: &kvs },
        ],
        &batch,
    )
    .unwrap();
    let raw = load_raw_inputs(&input.0, Rotation::None).unwrap();
    assert_eq!(raw.packed.as_ref(), Some(&batch));
    let InputTensor::Fp8(rq) = &raw.q else { panic!("E4M3 q read as {:?}", raw.q) };
    assert_eq!((&rq.data, &rq.scales[..]), (&q, &qs[..]));
    // The tools' reader, which takes [B, H, S, D] tensors only, refuses it.
    assert!(matches!(load_inputs(&input.0), Err(IoError::PackedTensor { name: "cu_seqlens_q", .. })));
    let too_long = PackedBatch::from_lengths(&[i32::MAX as usize, 1], &[1, 1]);
    assert!(matches!(too_long, Err(AttnError::TooLarge(_))), "{too_long:?}");
    assert!(matches!(PackedBatch::from_lengths(&[1], &[1, 2]), Err(AttnError::ShapeMismatch(_))));
}

#[test]
fn float_rows_are_quantized_per_head_as_the_gpu_will() {
    let values: Vec<f32> = (0..TOTAL_Q * HEADS_Q * HEAD_DIM).map(|i| ((i % 97) as f32 - 48.0) / 8.0).collect();
    let t = with(tensors(), "q", Dtype::F32, vec![TOTAL_Q, HEADS_Q, HEAD_DIM], f32_bytes(&values));
    let t = without(t, "q_scale");
    let raw = load_raw_inputs(&file(&t).0, Rotation::Hadamard).expect("float q");
    let InputTensor::Float(q) = &raw.q else { panic!("float q read as {:?}", raw.q) };
    assert_eq!(q.shape, [TOTAL_Q, HEADS_Q, 1, HEAD_DIM]);
    let (want, _) = scales_as_gpu("q", &values, q.shape, Rotation::Hadamard, ScaleGroup::PerHead).unwrap();
    assert_eq!(q.scales, want);
    // Per head over every row: head h's amax is over rows r of [r, h, :].
    let amax = |h: usize| {
        (0..TOTAL_Q).flat_map(|r| &values[(r * HEADS_Q + h) * HEAD_DIM..][..HEAD_DIM]).fold(0f32, |m, x| m.max(x.abs()))
    };
    let plain = load_raw_inputs(&file(&t).0, Rotation::None).unwrap();
    for h in 0..HEADS_Q {
        assert_eq!(plain.q.scales()[h], amax(h) / 448.0, "head {h}");
    }
    // A non-finite value is refused, as in a dense file.
    let mut bad = values.clone();
    bad[5 * HEADS_Q * HEAD_DIM + 3] = f32::NAN;
    let t = with(t, "q", Dtype::F32, vec![TOTAL_Q, HEADS_Q, HEAD_DIM], f32_bytes(&bad));
    refused(&t, "NaN");
}

#[test]
fn prefix_sums_must_start_at_zero_rise_and_end_at_the_rows() {
    for (name, sums, needle) in [
        ("cu_seqlens_q", [1, 3, 3, 7], "`cu_seqlens_q`[0] is 1; expected 0"),
        ("cu_seqlens_q", [0, 3, 2, 7], "`cu_seqlens_q`[2] is 2; expected 3 ..= 7"),
        ("cu_seqlens_q", [0, 3, 3, 6], "`cu_seqlens_q`[3] is 6; expected 7"),
        ("cu_seqlens_q", [0, 9, 9, 7], "`cu_seqlens_q`[1] is 9; expected 0 ..= 7"),
        ("cu_seqlens_q", [0, -1, 3, 7], "`cu_seqlens_q`[1] is -1"),
        ("cu_seqlens_k", [0, 5, 7, 12], "`cu_seqlens_k`[3] is 12; expected 11"),
        ("cu_seqlens_k", [0, 5, i32::MAX, 11], "`cu_seqlens_k`[2] is 2147483647"),
        ("cu_seqlens_k", [0, 5, 4, 11], "`cu_seqlens_k`[2] is 4; expected 5 ..= 11"),
    ] {
        let err = refused(&with(tensors(), name, Dtype::I32, vec![4], i32_bytes(&sums)), needle);
        assert!(matches!(err, IoError::OutOfRange { .. }), "{err:?}");
    }
}

#[test]
fn prefix_sums_of_the_wrong_dtype_shape_or_length_are_refused() {
    let err = refused(&with(tensors(), "cu_seqlens_q", Dtype::I64, vec![4], vec![0; 32]), "dtype I64; expected I32");
    assert!(matches!(err, IoError::UnsupportedDtype { .. }));
    let err = refused(&with(tensors(), "cu_seqlens_k", Dtype::I32, vec![2, 2], i32_bytes(&[0, 5, 7, 11])), "[B + 1]");
    assert!(matches!(err, IoError::WrongShape { .. }));
    // One entry is no sequence at all.
    refused(&with(tensors(), "cu_seqlens_q", Dtype::I32, vec![1], i32_bytes(&[0])), "B >= 1");
    let err = refused(&with(tensors(), "cu_seqlens_k", Dtype::I32, vec![3], i32_bytes(&[0, 5, 11])), "[4], the length");
    assert!(matches!(err, IoError::WrongShape { .. }));
    // One without the other.
    for (name, other) in [("cu_seqlens_q", "cu_seqlens_k"), ("cu_seqlens_k", "cu_seqlens_q")] {
        let err = refused(&without(tensors(), name), &format!("missing tensor `{name}`"));
        assert!(matches!(err, IoError::MissingTensor { .. }), "{other}: {err:?}");
    }
}

#[test]
fn packed_tensors_must_be_rank_3_with_rows_and_scales_per_head() {
    let err = refused(&with(tensors(), "q", Dtype::F8_E4M3, vec![1, 7, 4, 64], codes(1792, 3)), "rank 3 [total_rows");
    assert!(matches!(err, IoError::WrongShape { .. }));
    let err = refused(&with(tensors(), "k", Dtype::F8_E4M3, vec![0, 2, 64], Vec::new()), "zero");
    assert!(matches!(err, IoError::Attn { source: AttnError::ZeroDimension { .. }, .. }), "{err:?}");
    let err = refused(&with(tensors(), "v", Dtype::I32, vec![11, 2, 64], vec![0; 11 * 2 * 64 * 4]), "dtype I32");
    assert!(matches!(err, IoError::UnsupportedDtype { .. }));
    let err = refused(&with(tensors(), "k_scale", Dtype::F32, vec![3], f32_bytes(&[1.0; 3])), "one scale per head");
    assert!(matches!(err, IoError::ScaleLength { .. }));
    // v's shape differs from k's.
    let t = with(tensors(), "v", Dtype::F8_E4M3, vec![TOTAL_K, 1, 64], codes(TOTAL_K * 64, 3));
    let t = with(t, "v_scale", Dtype::F32, vec![1], f32_bytes(&[0.5]));
    refused(&t, "`v` has shape [11, 1, 64]; expected [11, 2, 64], the shape of `k`");
    let t = with(tensors(), "v", Dtype::F8_E4M3, vec![TOTAL_K - 1, 2, 64], codes((TOTAL_K - 1) * 128, 3));
    refused(&t, "the shape of `k`");
    // A file with more key rows than the prefix sums end at.
    let t = with(tensors(), "k", Dtype::F8_E4M3, vec![12, 2, 64], codes(12 * 128, 3));
    let t = with(t, "v", Dtype::F8_E4M3, vec![12, 2, 64], codes(12 * 128, 5));
    refused(&t, "`cu_seqlens_k`[3] is 11; expected 12");
}

#[test]
fn decode_tensors_are_refused_beside_a_packed_batch() {
    let t = with(tensors(), "seqused_k", Dtype::I32, vec![3], i32_bytes(&[1, 1, 1]));
    let err = refused(&t, "`seqused_k` is given with `cu_seqlens_q`");
    assert!(matches!(err, IoError::PackedWithDecode { name: "seqused_k", .. }));
    let t = with(tensors(), "page_table", Dtype::I32, vec![3, 1], i32_bytes(&[0, 1, 2]));
    let err = refused(&t, "`page_table` is given");
    assert!(matches!(err, IoError::PackedWithDecode { name: "page_table", .. }));
}

#[test]
fn the_library_checks_run_before_the_gpu() {
    // Scales judged as for a dense problem.
    let t = with(tensors(), "v_scale", Dtype::F32, vec![2], f32_bytes(&[0.02, f32::INFINITY]));
    cli_refuses(&file(&t), &[], "v_scale[1]");
    let t = with(tensors(), "v_scale", Dtype::F32, vec![2], f32_bytes(&[0.02, 1000.0]));
    cli_refuses(&file(&t), &[], "v_scale[1]");
    // Head dimension and heads.
    let t = with(tensors(), "q", Dtype::F8_E4M3, vec![TOTAL_Q, 3, 64], codes(TOTAL_Q * 3 * 64, 3));
    let t = with(t, "q_scale", Dtype::F32, vec![3], f32_bytes(&[1.0; 3]));
    cli_refuses(&file(&t), &[], "heads");
}

#[test]
fn a_packed_batch_runs_on_the_wgmma_variants_only() {
    let input = file(&tensors());
    for variant in ["split", "mma", "decode", "split-n64"] {
        cli_refuses(&input, &["--variant", variant], "runs on `wgmma` and `wgmma-fp8pv` only");
    }
}

/// A valid packed file reaches the GPU: exit 1 and one line without one
/// (here), `o` `[total_q, Hq, D]` and `lse` `[total_q, Hq]` with one (the
/// GPU test `tests/tests/cli_packed.rs` checks their values).
#[test]
fn a_valid_packed_file_reaches_the_gpu() {
    let input = file(&tensors());
    let output = TempPath::new("out");
    let args = ["run", "--input", input.as_str(), "--output", output.as_str(), "--lse", "--causal"];
    reaches_the_gpu(&args, &output, || {
        let out = load_packed_output(&output.0).unwrap();
        assert_eq!(out.shape, [TOTAL_Q, HEADS_Q, HEAD_DIM]);
        assert_eq!(out.lse.map(|l| l.len()), Some(TOTAL_Q * HEADS_Q));
    });
}

#[test]
fn packed_outputs_are_written_and_read_back() {
    let out = PackedOutput {
        bits: (0..2 * 3 * 64).map(|i| i as u16).collect(),
        dtype: OutputDtype::Bf16,
        shape: [2, 3, 64],
        lse: Some(vec![1.5, f32::NEG_INFINITY, 0.0, 2.0, 3.0, -1.0]),
    };
    let path = TempPath::new("o");
    OutputFile::create(&path.0).unwrap().write_packed(&out).unwrap();
    assert_eq!(load_packed_output(&path.0).unwrap(), out);
    let no_lse = PackedOutput { lse: None, ..out };
    OutputFile::create(&path.0).unwrap().write_packed(&no_lse).unwrap();
    assert_eq!(load_packed_output(&path.0).unwrap(), no_lse);
    // A dense output is not a packed one.
    let dense = file(&[("o".into(), Dtype::F16, vec![1, 2, 3, 64], vec![0; 768])]);
    assert!(matches!(load_packed_output(&dense.0), Err(IoError::WrongShape { .. })));
}

#[test]
fn run_help_explains_packed_batches() {
    let o = sdpa(&["run", "--help"]);
    let help = String::from_utf8_lossy(&o.stdout);
    for needle in ["cu_seqlens_q", "[total_q, Hq, D]", "wgmma-fp8pv"] {
        assert!(help.contains(needle), "{needle:?} not in `sdpa run --help`");
    }
}

#[test]
fn bench_refuses_bad_packed_lengths_before_the_gpu() {
    for (args, needle) in [
        (&["--packed", "0,0"][..], "at least 1 row"),
        (&["--packed", "64,2147483647"][..], "fewer than 2^31"),
        (&["--packed", "64", "--modes", "graph-overlap"][..], "no overlapped launch"),
        (&["--packed", "64,x"][..], "invalid digit"),
    ] {
        let o = sdpa(&[&["bench", "--shapes", "1,8,256,64"][..], args].concat());
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(needle), "{needle:?} not in {stderr:?}");
    }
    // The packed problem itself: more sequences than the grid holds.
    // (Given as seven lists: one argument holds at most 128 KiB.)
    let lens = vec!["1"; 10_000].join(",");
    let mut args = vec!["bench", "--shapes", "1,8,256,64"];
    for _ in 0..7 {
        args.extend(["--packed", &lens]);
    }
    let o = sdpa(&args);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(stderr.lines().count() == 1 && stderr.contains("--packed at shape 1,8,256,64"), "{stderr:?}");
    assert!(stderr.contains("batch = 70000 exceeds the grid limit"), "{stderr:?}");
}
