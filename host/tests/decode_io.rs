//! The decode tensors of `sdpa run`'s files without a GPU: `seqused_k`,
//! `page_table` (with pools of pages for `k` and `v`) and `lse` written and
//! read back; every malformed one refused by the reader with a typed error,
//! and by the CLI with exit code 2 and one line, before any GPU work;
//! `--lse` and the decode tensors refused with a variant other than
//! `decode`.

use safetensors::{Dtype, tensor::TensorView};
use sdpa::io::{
    DecodeInputs, Inputs, IoError, Lse, OutputFile, PageTable, load_inputs, load_lse, load_output, load_raw_inputs,
    save_decode_inputs,
};
use sdpa::quant::{Rotation, from_codes};
use sdpa::tensor::Fp8Input;
use sdpa::{AttnError, Options, OutputDtype};

mod common;
use common::{TempPath, f32_bytes, i32_bytes, reaches_the_gpu, sdpa};

// The problem: B = 2, Hq = 4, Hkv = 2, Sq = 1, D = 64; a cache of 2 pages
// of 32 keys per sequence (Skv = 64) in pools of 5 pages.
const BATCH: usize = 2;
const HEADS_Q: usize = 4;
const HEADS_KV: usize = 2;
const HEAD_DIM: usize = 64;
const PAGE_SIZE: usize = 32;
const PAGES: usize = 5;
const MAX_PAGES: usize = 2;
const TABLE: [i32; 4] = [3, 0, 4, 1];

/// One tensor of a file: name, dtype, shape, bytes.
type Tensor = (String, Dtype, Vec<usize>, Vec<u8>);

/// The tensors of a valid file: E4M3 q, pools k and v (or contiguous k, v
/// `[B, Hkv, 64, D]` when not `paged`) with their scales, the table when
/// `paged`, and `seqused_k` when given.
fn tensors(paged: bool, lens: Option<&[i32]>) -> Vec<Tensor> {
    let code = |n: usize, seed: u8| (0..n).map(|i| (i as u8).wrapping_mul(seed) & 0x3F).collect::<Vec<u8>>();
    let q_shape = vec![BATCH, HEADS_Q, 1, HEAD_DIM];
    let kv_shape = if paged { vec![PAGES, PAGE_SIZE, HEADS_KV, HEAD_DIM] } else { vec![BATCH, HEADS_KV, 64, HEAD_DIM] };
    let kv_len: usize = kv_shape.iter().product();
    let mut t: Vec<Tensor> = vec![
        ("q".into(), Dtype::F8_E4M3, q_shape.clone(), code(q_shape.iter().product(), 7)),
        ("k".into(), Dtype::F8_E4M3, kv_shape.clone(), code(kv_len, 11)),
        ("v".into(), Dtype::F8_E4M3, kv_shape, code(kv_len, 13)),
        ("q_scale".into(), Dtype::F32, vec![HEADS_Q], f32_bytes(&[0.05; HEADS_Q])),
        ("k_scale".into(), Dtype::F32, vec![HEADS_KV], f32_bytes(&[0.04; HEADS_KV])),
        ("v_scale".into(), Dtype::F32, vec![HEADS_KV], f32_bytes(&[0.03; HEADS_KV])),
    ];
    if paged {
        t.push(("page_table".into(), Dtype::I32, vec![BATCH, MAX_PAGES], i32_bytes(&TABLE)));
    }
    if let Some(lens) = lens {
        t.push(("seqused_k".into(), Dtype::I32, vec![lens.len()], i32_bytes(lens)));
    }
    t
}

/// `t` with tensor `name` replaced (or added).
fn with(mut t: Vec<Tensor>, name: &str, dtype: Dtype, shape: Vec<usize>, bytes: Vec<u8>) -> Vec<Tensor> {
    t.retain(|(n, ..)| n != name);
    t.push((name.to_string(), dtype, shape, bytes));
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

/// `sdpa run`'s reader refuses the file with an error holding `needle`,
/// and the CLI exits 2 with that one line, writing nothing.
fn refused(tensors: &[Tensor], needle: &str) -> IoError {
    let input = file(tensors);
    let err = load_raw_inputs(&input.0, Rotation::None).expect_err("the file should be refused");
    let msg = err.to_string();
    assert!(msg.contains(needle) && msg.starts_with(input.as_str()), "{needle:?} not in {msg:?}");
    assert!(!msg.contains('\n'), "{msg:?}");
    let output = TempPath::new("out");
    let o = sdpa(&["run", "--input", input.as_str(), "--output", output.as_str()]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr:?}");
    assert!(stderr.starts_with("error: ") && stderr.contains(needle), "{needle:?} not in {stderr:?}");
    assert!(!output.0.exists(), "an output was written");
    err
}

#[test]
fn seqused_k_of_the_wrong_dtype_or_shape_is_refused() {
    for paged in [false, true] {
        for dtype in [Dtype::I64, Dtype::F32, Dtype::U32] {
            let n = BATCH * (dtype.bitsize() / 8);
            let t = with(tensors(paged, None), "seqused_k", dtype, vec![BATCH], vec![0; n]);
            let err = refused(&t, &format!("tensor `seqused_k` has dtype {dtype}; expected I32"));
            assert!(matches!(err, IoError::UnsupportedDtype { .. }), "{err:?}");
        }
        for shape in [vec![BATCH + 1], vec![1], vec![BATCH, 1], vec![]] {
            let n = shape.iter().product::<usize>();
            let t = with(tensors(paged, None), "seqused_k", Dtype::I32, shape.clone(), vec![0; 4 * n]);
            let err = refused(&t, &format!("`seqused_k` has shape {shape:?}; expected [2]: the batch of `q`"));
            assert!(matches!(err, IoError::WrongShape { .. }), "{err:?}");
        }
    }
}

#[test]
fn seqused_k_outside_the_cache_is_refused() {
    for paged in [false, true] {
        for (lens, needle) in [
            ([-1, 3], "`seqused_k`[0] is -1; expected 0 ..= 64"),
            ([64, 65], "`seqused_k`[1] is 65; expected 0 ..= 64"),
            ([i32::MIN, 0], "`seqused_k`[0] is -2147483648"),
            ([0, i32::MAX], "`seqused_k`[1] is 2147483647"),
        ] {
            let err = refused(&tensors(paged, Some(&lens)), needle);
            assert!(matches!(err, IoError::OutOfRange { name: "seqused_k", .. }), "{err:?}");
        }
    }
}

#[test]
fn a_page_table_of_the_wrong_dtype_or_shape_is_refused() {
    for dtype in [Dtype::I64, Dtype::U32, Dtype::F32] {
        let t =
            with(tensors(true, None), "page_table", dtype, vec![BATCH, MAX_PAGES], vec![0; 4 * (dtype.bitsize() / 8)]);
        let err = refused(&t, &format!("`page_table` has dtype {dtype}; expected I32"));
        assert!(matches!(err, IoError::UnsupportedDtype { .. }), "{err:?}");
    }
    for shape in [vec![BATCH + 1, MAX_PAGES], vec![1, MAX_PAGES], vec![BATCH], vec![BATCH, 0], vec![BATCH, 2, 1]] {
        let n = shape.iter().product::<usize>();
        let t = with(tensors(true, None), "page_table", Dtype::I32, shape.clone(), vec![0; 4 * n]);
        let err = refused(&t, &format!("`page_table` has shape {shape:?}; expected [2, max_pages]"));
        assert!(matches!(err, IoError::WrongShape { .. }), "{err:?}");
    }
}

#[test]
fn pages_outside_the_pools_are_refused_where_a_sequence_reads_them() {
    for (entries, lens, needle) in [
        ([3, 0, 5, 1], None, "`page_table`[1, 0] is 5; expected 0 .. 5"),
        ([3, -1, 4, 1], None, "`page_table`[0, 1] is -1"),
        ([3, 0, 4, i32::MAX], Some([64, 33]), "`page_table`[1, 1] is 2147483647"),
        ([3, 0, 4, i32::MIN], Some([1, 64]), "`page_table`[1, 1] is -2147483648"),
    ] {
        let t = with(
            tensors(true, lens.as_ref().map(|l| &l[..])),
            "page_table",
            Dtype::I32,
            vec![2, 2],
            i32_bytes(&entries),
        );
        let err = refused(&t, needle);
        assert!(matches!(err, IoError::OutOfRange { name: "page_table", .. }), "{err:?}");
    }
    // Entries past a sequence's length are never read: padding is fine.
    for (entries, lens) in [([3, -1, 4, 1], [32, 64]), ([-1, -1, 4, 99], [0, 32])] {
        let t = with(tensors(true, Some(&lens)), "page_table", Dtype::I32, vec![2, 2], i32_bytes(&entries));
        let inputs = load_raw_inputs(&file(&t).0, Rotation::None).expect("padding past the lengths is accepted");
        assert_eq!(inputs.decode.page_table.unwrap().entries, entries);
    }
}

#[test]
fn pools_must_be_e4m3_pages_the_kernels_can_read() {
    let pool = vec![PAGES, PAGE_SIZE, HEADS_KV, HEAD_DIM];
    let n: usize = pool.iter().product();
    let t = with(tensors(true, None), "k", Dtype::F16, pool.clone(), vec![0; 2 * n]);
    let t: Vec<Tensor> = t.into_iter().filter(|(name, ..)| name != "k_scale").collect();
    let err = refused(&t, "`k` has dtype F16; expected F8_E4M3 (the pages of a paged cache are E4M3 codes)");
    assert!(matches!(err, IoError::UnsupportedDtype { .. }), "{err:?}");
    for page_size in [16, 48, 1] {
        let shape = vec![PAGES, page_size, HEADS_KV, HEAD_DIM];
        let n: usize = shape.iter().product();
        let t = with(tensors(true, None), "k", Dtype::F8_E4M3, shape.clone(), vec![0x38; n]);
        let t = with(t, "v", Dtype::F8_E4M3, shape, vec![0x38; n]);
        let err = refused(&t, &format!("`k` has pages of {page_size} keys (its dimension 1)"));
        assert!(matches!(err, IoError::PageSize { page_size: p, .. } if p == page_size), "{err:?}");
    }
    // v's pool must be k's.
    let other = vec![PAGES + 1, PAGE_SIZE, HEADS_KV, HEAD_DIM];
    let n: usize = other.iter().product();
    let t = with(tensors(true, None), "v", Dtype::F8_E4M3, other, vec![0x38; n]);
    let err = refused(&t, "`v` has shape [6, 32, 2, 64]; expected [5, 32, 2, 64], the shape of the `k` pool");
    assert!(matches!(err, IoError::WrongShape { .. }), "{err:?}");
    // Rank 4 only, no zero dimension.
    let flat = vec![PAGES * PAGE_SIZE, HEADS_KV, HEAD_DIM];
    let t = with(tensors(true, None), "k", Dtype::F8_E4M3, flat, vec![0; PAGES * PAGE_SIZE * HEADS_KV * HEAD_DIM]);
    refused(&t, "`k` has shape [160, 2, 64]; expected rank 4 [pages, page_size, heads_kv, head_dim]");
    let t = with(tensors(true, None), "k", Dtype::F8_E4M3, vec![0, PAGE_SIZE, HEADS_KV, HEAD_DIM], vec![]);
    let err = refused(&t, "zero-sized dimension");
    assert!(matches!(err, IoError::Attn { source: AttnError::ZeroDimension { .. }, .. }), "{err:?}");
    // A pool's scales are one per key/value head (its dimension 2).
    let t = with(tensors(true, None), "k_scale", Dtype::F32, vec![PAGE_SIZE], f32_bytes(&[0.5; PAGE_SIZE]));
    let err = refused(&t, "`k_scale` holds 32 values but `k` has 2 heads");
    assert!(matches!(err, IoError::ScaleLength { .. }), "{err:?}");
}

/// The library's own checks see a pool as the cache it stands for: here a
/// q of another head dimension than the pages'.
#[test]
fn pools_are_validated_as_the_cache_they_make() {
    let q_shape = vec![BATCH, HEADS_Q, 1, 128];
    let t = with(tensors(true, None), "q", Dtype::F8_E4M3, q_shape, vec![0x38; BATCH * HEADS_Q * 128]);
    let input = file(&t);
    let output = TempPath::new("out");
    let o = sdpa(&["run", "--input", input.as_str(), "--output", output.as_str()]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("q has head_dim 128 but k/v have head_dim 64"), "{stderr}");
}

#[test]
fn the_decode_tensors_need_the_decode_variant() {
    let paged = file(&tensors(true, Some(&[40, 64])));
    let output = TempPath::new("out");
    let o = sdpa(&["run", "--input", paged.as_str(), "--output", output.as_str(), "--variant", "mma"]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr:?}");
    let needle = "`seqused_k` and `page_table` are the `decode` variant's; --variant mma cannot run it";
    assert!(stderr.contains(needle), "{needle:?} not in {stderr:?}");
    assert!(!output.0.exists());
}

#[test]
fn the_tools_reader_refuses_decode_files() {
    for t in [tensors(true, None), tensors(false, Some(&[1, 2]))] {
        let input = file(&t);
        let err = load_inputs(&input.0).expect_err("a decode file");
        assert!(matches!(err, IoError::DecodeTensor { .. }), "{err:?}");
        assert!(err.to_string().contains("read by the `decode` path only"), "{err}");
    }
}

/// Codes and scales of `tensors(true, ..)` as host tensors.
fn decode_inputs(lens: Option<Vec<i32>>) -> (Inputs, DecodeInputs) {
    let t = tensors(true, None);
    let codes = |name: &str| t.iter().find(|(n, ..)| n == name).unwrap().3.clone();
    let q = from_codes(codes("q"), [BATCH, HEADS_Q, 1, HEAD_DIM], vec![0.05; HEADS_Q]);
    let pool = [PAGES, PAGE_SIZE, HEADS_KV, HEAD_DIM];
    let k = from_codes(codes("k"), pool, vec![0.04; HEADS_KV]);
    let v = from_codes(codes("v"), pool, vec![0.03; HEADS_KV]);
    let table = PageTable { entries: TABLE.to_vec(), batch: BATCH, max_pages: MAX_PAGES };
    (Inputs { q, k, v }, DecodeInputs { seq_used_k: lens, page_table: Some(table) })
}

#[test]
fn decode_files_round_trip_and_plan_as_the_cache() {
    let (inputs, decode) = decode_inputs(Some(vec![40, 64]));
    let path = TempPath::new("round-trip");
    save_decode_inputs(&path.0, &inputs, &decode).unwrap();
    let raw = load_raw_inputs(&path.0, Rotation::None).unwrap();
    assert_eq!(raw.decode, decode);
    let [q, k, v] = raw.planned();
    assert_eq!(k.shape(), [BATCH, HEADS_KV, MAX_PAGES * PAGE_SIZE, HEAD_DIM]);
    assert_eq!((q.shape(), v.shape()), ([BATCH, HEADS_Q, 1, HEAD_DIM], k.shape()));
    let problem = sdpa::validate::validate(&q, &k, &v, &Options::default()).expect("valid");
    assert_eq!(problem.scales, [vec![0.05; HEADS_Q], vec![0.04; HEADS_KV], vec![0.03; HEADS_KV]].concat());
    // The same file without lengths, and a contiguous one with them.
    let (inputs, decode) = decode_inputs(None);
    save_decode_inputs(&path.0, &inputs, &decode).unwrap();
    assert_eq!(load_raw_inputs(&path.0, Rotation::None).unwrap().decode, decode);
    let contiguous = file(&tensors(false, Some(&[0, 64])));
    let raw = load_raw_inputs(&contiguous.0, Rotation::None).unwrap();
    assert_eq!(raw.decode, DecodeInputs { seq_used_k: Some(vec![0, 64]), page_table: None });
}

/// A valid decode file reaches the GPU: exit 1 and one line without one
/// (here), an output with `o` and `lse` with one (the GPU test
/// `tests/tests/cli_decode.rs` checks its values).
#[test]
fn a_valid_decode_file_reaches_the_gpu() {
    let (inputs, decode) = decode_inputs(Some(vec![40, 64]));
    let input = TempPath::new("valid");
    save_decode_inputs(&input.0, &inputs, &decode).unwrap();
    let output = TempPath::new("out");
    reaches_the_gpu(&["run", "--input", input.as_str(), "--output", output.as_str(), "--lse"], &output, || {
        assert_eq!(load_output(&output.0).unwrap().shape, [BATCH, HEADS_Q, 1, HEAD_DIM]);
        assert_eq!(load_lse(&output.0).unwrap().shape, [BATCH, HEADS_Q, 1]);
    });
}

#[test]
fn lse_is_written_beside_o_and_read_back() {
    let o = sdpa::Output { bits: vec![0x3C00; 8], dtype: OutputDtype::F16, shape: [1, 2, 1, 4] };
    let lse = Lse { values: vec![1.5, f32::NEG_INFINITY], shape: [1, 2, 1] };
    let path = TempPath::new("lse");
    OutputFile::create(&path.0).unwrap().write(&o, Some(&lse)).unwrap();
    assert_eq!(load_output(&path.0).unwrap(), o);
    assert_eq!(load_lse(&path.0).unwrap(), lse);
    // Without it, the file holds o alone.
    OutputFile::create(&path.0).unwrap().write(&o, None).unwrap();
    assert!(matches!(load_lse(&path.0), Err(IoError::MissingTensor { .. })));
}

#[test]
fn run_help_explains_the_decode_tensors() {
    let o = sdpa(&["run", "--help"]);
    let help = String::from_utf8_lossy(&o.stdout);
    for needle in ["seqused_k", "page_table", "--lse", "[pages, page_size, Hkv, D]", "F32 [B, Hq, Sq]"] {
        assert!(help.contains(needle), "{needle:?} not in:\n{help}");
    }
}

/// `sdpa bench`'s paged and length options are checked before any GPU
/// work: exit 2 and one line.
#[test]
fn bench_refuses_bad_page_sizes_lengths_and_modes_before_the_gpu() {
    let decode = "2,8:2,1:4096,64";
    for (shape, extra, needle) in [
        (decode, &["--page-size", "48"][..], "--page-size 48: a power of two from 32 to 65536"),
        (decode, &["--page-size", "16"][..], "--page-size 16"),
        (decode, &["--seqused-k", "5,4097"][..], "--seqused-k 4097 is past shape 2,8:2,1:4096,64's 4096 keys"),
        (decode, &["--page-size", "64", "--modes", "graph-overlap"][..], "drop graph-overlap from --modes"),
        ("2,8,256,64", &["--page-size", "64"][..], "apply to decode shapes (Sq <= 16), and no shape is one"),
    ] {
        let args = [&["bench", "--shapes", shape][..], extra].concat();
        let o = sdpa(&args);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr:?}");
        assert!(stderr.contains(needle), "{needle:?} not in {stderr:?}");
    }
    let o = sdpa(&["bench", "--help"]);
    let help = String::from_utf8_lossy(&o.stdout);
    assert!(help.contains("--page-size") && help.contains("--seqused-k") && help.contains("paged:N"), "{help}");
}
