//! Safetensors input and output: round trips through temporary files, and
//! every error case with its one-line message.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use half::{bf16, f16};
use safetensors::{Dtype, tensor::TensorView};
use sdpa::io::{Inputs, IoError, load_inputs, load_output, save_inputs, save_output};
use sdpa::quant::{quantize_per_head_named, random_normal, random_problem};
use sdpa::{AttnError, Output, OutputDtype};

/// A fresh path in the temp directory, unique per process and call; the
/// file is removed when the guard drops.
struct TempPath(PathBuf);

impl TempPath {
    fn new(tag: &str) -> Self {
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let name = format!("sdpa-io-test-{}-{n}-{tag}.safetensors", std::process::id());
        TempPath(std::env::temp_dir().join(name))
    }
}

impl Drop for TempPath {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// One tensor to write: name, dtype, shape, raw bytes.
type Raw = (&'static str, Dtype, Vec<usize>, Vec<u8>);

fn write_raw(path: &Path, tensors: &[Raw]) {
    let views: Vec<(&str, TensorView)> =
        tensors.iter().map(|(n, d, s, b)| (*n, TensorView::new(*d, s.clone(), b).unwrap())).collect();
    safetensors::serialize_to_file(views, None, path).unwrap();
}

fn f32_bytes(xs: &[f32]) -> Vec<u8> {
    xs.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn fp8(name: &'static str, shape: [usize; 4]) -> Raw {
    let n = shape.iter().product();
    (name, Dtype::F8_E4M3, shape.to_vec(), vec![0x38; n])
}

fn err_of(path: &Path) -> IoError {
    load_inputs(path).expect_err("load_inputs should fail")
}

/// The message is one line and names the file.
fn check_message(err: &IoError, path: &Path, needle: &str) {
    let msg = err.to_string();
    assert!(!msg.contains('\n'), "not one line: {msg:?}");
    assert!(msg.contains(&path.display().to_string()), "no path in {msg:?}");
    assert!(msg.contains(needle), "{needle:?} not in {msg:?}");
}

#[test]
fn fp8_inputs_round_trip() {
    let (q, k, v) = random_problem([2, 4, 5, 64], [2, 2, 7, 64], 1);
    let inputs = Inputs { q, k, v };
    let path = TempPath::new("fp8");
    save_inputs(&path.0, &inputs).unwrap();
    assert_eq!(load_inputs(&path.0).unwrap(), inputs);
}

#[test]
fn fp8_without_scales_defaults_to_one() {
    let path = TempPath::new("noscale");
    write_raw(
        &path.0,
        &[
            fp8("q", [1, 3, 2, 4]),
            fp8("k", [1, 1, 2, 4]),
            fp8("v", [1, 1, 2, 4]),
            ("k_scale", Dtype::F32, vec![1], f32_bytes(&[0.5])),
        ],
    );
    let x = load_inputs(&path.0).unwrap();
    assert_eq!(x.q.scales, vec![1.0; 3]);
    assert_eq!(x.k.scales, vec![0.5]);
    assert_eq!(x.v.scales, vec![1.0]);
    assert_eq!(x.q.data, vec![0x38; 24]);
    assert_eq!(x.q.shape, [1, 3, 2, 4]);
}

#[test]
fn scales_of_any_shape_with_one_value_per_head() {
    let path = TempPath::new("scaleshape");
    write_raw(
        &path.0,
        &[
            fp8("q", [1, 2, 1, 4]),
            ("q_scale", Dtype::F32, vec![1, 2, 1, 1], f32_bytes(&[0.25, 4.0])),
            fp8("k", [1, 1, 1, 4]),
            fp8("v", [1, 1, 1, 4]),
        ],
    );
    assert_eq!(load_inputs(&path.0).unwrap().q.scales, vec![0.25, 4.0]);
}

#[test]
fn float_inputs_are_quantized_per_head() {
    let shape = [1, 2, 3, 8];
    let values = random_normal(shape, 5);
    let as_f16: Vec<f32> = values.iter().map(|&x| f16::from_f32(x).to_f32()).collect();
    let as_bf16: Vec<f32> = values.iter().map(|&x| bf16::from_f32(x).to_f32()).collect();
    let path = TempPath::new("float");
    write_raw(
        &path.0,
        &[
            ("q", Dtype::F32, shape.to_vec(), f32_bytes(&values)),
            ("k", Dtype::F16, shape.to_vec(), values.iter().flat_map(|&x| f16::from_f32(x).to_le_bytes()).collect()),
            ("v", Dtype::BF16, shape.to_vec(), values.iter().flat_map(|&x| bf16::from_f32(x).to_le_bytes()).collect()),
        ],
    );
    let x = load_inputs(&path.0).unwrap();
    assert_eq!(x.q, quantize_per_head_named("q", &values, shape).unwrap());
    assert_eq!(x.k, quantize_per_head_named("k", &as_f16, shape).unwrap());
    assert_eq!(x.v, quantize_per_head_named("v", &as_bf16, shape).unwrap());
    assert_eq!(x.q.scales.len(), 2);
}

#[test]
fn output_round_trips_as_f16_and_bf16() {
    let shape = [2, 3, 4, 8];
    let values = (0..192).map(|i| i as f32 * 0.37 - 30.0);
    let f16_bits = values.clone().map(|x| f16::from_f32(x).to_bits()).collect();
    let bf16_bits = values.map(|x| bf16::from_f32(x * 1e20).to_bits()).collect();
    for (o, dtype) in [
        (Output { bits: f16_bits, dtype: OutputDtype::F16, shape }, Dtype::F16),
        (Output { bits: bf16_bits, dtype: OutputDtype::Bf16, shape }, Dtype::BF16),
    ] {
        let path = TempPath::new("out");
        save_output(&path.0, &o).unwrap();
        assert_eq!(load_output(&path.0).unwrap(), o);
        // And it is a plain safetensors file with one tensor `o` of the type.
        let bytes = std::fs::read(&path.0).unwrap();
        let st = safetensors::SafeTensors::deserialize(&bytes).unwrap();
        assert_eq!(st.names(), vec!["o"]);
        let view = st.tensor("o").unwrap();
        assert_eq!(view.dtype(), dtype);
        assert_eq!(view.shape(), &shape);
    }
}

#[test]
fn output_values_read_the_bits_as_their_type() {
    let bits = vec![0x3C00, 0x4248];
    let o = Output { bits: bits.clone(), dtype: OutputDtype::F16, shape: [1, 1, 1, 2] };
    assert_eq!(o.values(), vec![1.0, 3.140625]);
    let o = Output { bits, dtype: OutputDtype::Bf16, shape: [1, 1, 1, 2] };
    assert_eq!(o.values(), vec![0.0078125, 50.0]);
    assert_eq!(o.value(1), 50.0);
    // The poison written before checked runs is a NaN of either type.
    for dtype in OutputDtype::ALL {
        assert!(sdpa::tensor::to_f32(dtype, sdpa::attention::POISON).is_nan(), "{}", dtype.name());
    }
}

#[test]
fn save_output_replaces_an_existing_file() {
    let path = TempPath::new("replace");
    std::fs::write(&path.0, b"old contents").unwrap();
    let o = Output { bits: vec![f16::ONE.to_bits(); 4], dtype: OutputDtype::F16, shape: [1, 1, 1, 4] };
    save_output(&path.0, &o).unwrap();
    assert_eq!(load_output(&path.0).unwrap(), o);
}

#[test]
fn missing_file() {
    let path = TempPath::new("missing");
    let err = err_of(&path.0);
    assert!(matches!(err, IoError::NotFound { .. }), "{err:?}");
    check_message(&err, &path.0, "no such file");
}

#[test]
fn unreadable_file() {
    // A path through a regular file, as if it were a directory.
    let file = TempPath::new("plain");
    std::fs::write(&file.0, b"").unwrap();
    let path = file.0.join("inside");
    let err = err_of(&path);
    assert!(matches!(err, IoError::Unreadable { .. }), "{err:?}");
    check_message(&err, &path, "cannot read");
}

#[test]
fn a_directory_is_not_read() {
    let dir = std::env::temp_dir();
    let err = err_of(&dir);
    assert!(matches!(err, IoError::NotAFile { .. }), "{err:?}");
    check_message(&err, &dir, "not a regular file");
}

#[test]
fn not_a_safetensors_file() {
    for (tag, contents) in [
        ("text", b"hello, this is not a tensor file\n".to_vec()),
        ("empty", Vec::new()),
        ("short", vec![1, 2, 3]),
        ("badheader", {
            let mut b = 16u64.to_le_bytes().to_vec();
            b.extend_from_slice(b"{not json at all");
            b
        }),
    ] {
        let path = TempPath::new(tag);
        std::fs::write(&path.0, contents).unwrap();
        let err = err_of(&path.0);
        assert!(matches!(err, IoError::NotSafetensors { .. }), "{tag}: {err:?}");
        check_message(&err, &path.0, "not a safetensors file");
    }
}

#[test]
fn missing_tensor_is_named() {
    let path = TempPath::new("nok");
    write_raw(&path.0, &[fp8("q", [1, 1, 1, 4]), fp8("v", [1, 1, 1, 4])]);
    let err = err_of(&path.0);
    match &err {
        IoError::MissingTensor { name, present, .. } => {
            assert_eq!(name, "k");
            assert_eq!(present, "q, v");
        }
        other => panic!("expected MissingTensor, got {other:?}"),
    }
    check_message(&err, &path.0, "missing tensor `k`");
}

#[test]
fn wrong_rank() {
    let path = TempPath::new("rank");
    write_raw(
        &path.0,
        &[fp8("q", [1, 1, 1, 4]), ("k", Dtype::F8_E4M3, vec![2, 4], vec![0; 8]), fp8("v", [1, 1, 1, 4])],
    );
    let err = err_of(&path.0);
    assert!(matches!(&err, IoError::WrongRank { name, shape, .. } if name == "k" && shape == &[2, 4]), "{err:?}");
    check_message(&err, &path.0, "`k` has rank 2");
}

#[test]
fn unsupported_dtype() {
    let path = TempPath::new("dtype");
    write_raw(
        &path.0,
        &[("q", Dtype::I32, vec![1, 1, 1, 4], vec![0; 16]), fp8("k", [1, 1, 1, 4]), fp8("v", [1, 1, 1, 4])],
    );
    let err = err_of(&path.0);
    assert!(matches!(&err, IoError::UnsupportedDtype { name, .. } if name == "q"), "{err:?}");
    check_message(&err, &path.0, "`q` has dtype I32");
}

#[test]
fn scale_of_wrong_dtype() {
    let path = TempPath::new("scaledtype");
    write_raw(
        &path.0,
        &[
            fp8("q", [1, 1, 1, 4]),
            fp8("k", [1, 1, 1, 4]),
            fp8("v", [1, 1, 1, 4]),
            ("v_scale", Dtype::F16, vec![1], f16::ONE.to_le_bytes().to_vec()),
        ],
    );
    let err = err_of(&path.0);
    assert!(matches!(&err, IoError::UnsupportedDtype { name, .. } if name == "v_scale"), "{err:?}");
    check_message(&err, &path.0, "expected F32");
}

#[test]
fn scale_length_mismatch() {
    let path = TempPath::new("scalelen");
    write_raw(
        &path.0,
        &[
            fp8("q", [1, 4, 1, 4]),
            ("q_scale", Dtype::F32, vec![3], f32_bytes(&[1.0, 1.0, 1.0])),
            fp8("k", [1, 1, 1, 4]),
            fp8("v", [1, 1, 1, 4]),
        ],
    );
    let err = err_of(&path.0);
    assert!(matches!(&err, IoError::ScaleLength { heads: 4, actual: 3, .. }), "{err:?}");
    check_message(&err, &path.0, "`q_scale` holds 3 values but `q` has 4 heads");
}

#[test]
fn scale_alongside_float_input() {
    let path = TempPath::new("floatscale");
    write_raw(
        &path.0,
        &[
            fp8("q", [1, 1, 1, 4]),
            ("k", Dtype::F32, vec![1, 1, 1, 4], f32_bytes(&[1.0; 4])),
            ("k_scale", Dtype::F32, vec![1], f32_bytes(&[2.0])),
            fp8("v", [1, 1, 1, 4]),
        ],
    );
    let err = err_of(&path.0);
    assert!(matches!(&err, IoError::UnexpectedScale { name, .. } if name == "k_scale"), "{err:?}");
    check_message(&err, &path.0, "`k_scale` given but `k` is F32");
}

#[test]
fn non_finite_float_input_wraps_the_library_error() {
    let path = TempPath::new("nan");
    write_raw(
        &path.0,
        &[
            fp8("q", [1, 1, 1, 4]),
            fp8("k", [1, 1, 1, 4]),
            ("v", Dtype::F32, vec![1, 1, 1, 4], f32_bytes(&[1.0, f32::NAN, 0.0, 0.0])),
        ],
    );
    let err = err_of(&path.0);
    assert!(matches!(&err, IoError::Attn { source: AttnError::InvalidScale { .. }, .. }), "{err:?}");
    check_message(&err, &path.0, "v scale of head 0");
}

#[test]
fn write_failure() {
    let dir = TempPath::new("nodir");
    let path = dir.0.join("o.safetensors");
    let o = Output { bits: vec![0; 4], dtype: OutputDtype::F16, shape: [1, 1, 1, 4] };
    let err = save_output(&path, &o).unwrap_err();
    assert!(matches!(err, IoError::Write { .. }), "{err:?}");
    check_message(&err, &path, "cannot write");
}

#[test]
fn output_whose_data_does_not_match_its_shape_is_refused() {
    let path = TempPath::new("badout");
    let o = Output { bits: vec![0; 3], dtype: OutputDtype::Bf16, shape: [1, 1, 1, 4] };
    let err = save_output(&path.0, &o).unwrap_err();
    assert!(matches!(err, IoError::Write { .. }), "{err:?}");
    check_message(&err, &path.0, "tensor `o`");
    assert!(!path.0.exists());
}
