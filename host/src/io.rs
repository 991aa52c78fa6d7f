//! Safetensors files in and out, for the CLI and the tools.
//!
//! An input file holds tensors `q`, `k` and `v`, each of rank 4
//! (`[batch, heads, seq, head_dim]`), either
//! - `F8_E4M3` codes, with optional `F32` tensors `q_scale`, `k_scale`,
//!   `v_scale` holding one dequantization scale per head (any shape with
//!   that many elements, e.g. `[heads]`; a missing one means 1.0 for every
//!   head), or
//! - `F16`, `BF16` or `F32` values, which are quantized per head by amax
//!   ([`crate::quant`]); a `*_scale` tensor alongside a float input is an
//!   error, as it would be ignored.
//!
//! The tensors may mix the two kinds. An output file holds one `F16` tensor
//! `o`.

use std::path::{Path, PathBuf};

use half::{bf16, f16};
use safetensors::{Dtype, SafeTensors, tensor::TensorView};
use thiserror::Error;

use crate::error::AttnError;
use crate::quant;
use crate::tensor::{Fp8Tensor, Output};
use kernels_gpu::variant::OutputDtype;

/// Why a tensor file could not be read or written. Each message is one line
/// naming the file and the problem.
#[derive(Debug, Error)]
pub enum IoError {
    /// The file does not exist.
    #[error("{}: no such file", .path.display())]
    NotFound {
        /// The file.
        path: PathBuf,
    },
    /// The file exists but could not be read.
    #[error("{}: cannot read: {source}", .path.display())]
    Unreadable {
        /// The file.
        path: PathBuf,
        /// What the OS said.
        source: std::io::Error,
    },
    /// The file is not in the safetensors format.
    #[error("{}: not a safetensors file ({reason})", .path.display())]
    NotSafetensors {
        /// The file.
        path: PathBuf,
        /// What the parser said.
        reason: String,
    },
    /// A required tensor is absent.
    #[error("{}: missing tensor `{name}` (the file holds: {present})", .path.display())]
    MissingTensor {
        /// The file.
        path: PathBuf,
        /// The tensor looked for.
        name: String,
        /// The names it does hold, comma-separated.
        present: String,
    },
    /// A tensor whose rank is not 4.
    #[error(
        "{}: tensor `{name}` has rank {} (shape {shape:?}); expected rank 4 [batch, heads, seq, head_dim]",
        .path.display(), .shape.len()
    )]
    WrongRank {
        /// The file.
        path: PathBuf,
        /// The tensor.
        name: String,
        /// Its shape.
        shape: Vec<usize>,
    },
    /// A tensor of a dtype this tool does not read there.
    #[error("{}: tensor `{name}` has dtype {dtype}; expected {expected}", .path.display())]
    UnsupportedDtype {
        /// The file.
        path: PathBuf,
        /// The tensor.
        name: String,
        /// Its dtype, as safetensors names it.
        dtype: String,
        /// What is accepted for it.
        expected: &'static str,
    },
    /// A scale tensor without exactly one value per head.
    #[error(
        "{}: `{name}` holds {actual} values but `{tensor}` has {heads} heads (one scale per head)",
        .path.display()
    )]
    ScaleLength {
        /// The file.
        path: PathBuf,
        /// The scale tensor.
        name: String,
        /// The tensor it scales.
        tensor: String,
        /// Heads of that tensor.
        heads: usize,
        /// Values the scale tensor holds.
        actual: usize,
    },
    /// A scale tensor alongside a float input, which needs none.
    #[error(
        "{}: `{name}` given but `{tensor}` is {dtype}, not F8_E4M3 (float inputs are quantized per head by amax; drop `{name}`)",
        .path.display()
    )]
    UnexpectedScale {
        /// The file.
        path: PathBuf,
        /// The scale tensor.
        name: String,
        /// The float tensor.
        tensor: String,
        /// Its dtype.
        dtype: String,
    },
    /// The tensors were read but are not valid input (e.g. non-finite values
    /// to quantize).
    #[error("{}: {source}", .path.display())]
    Attn {
        /// The file.
        path: PathBuf,
        /// The library's error.
        source: AttnError,
    },
    /// The file could not be written.
    #[error("{}: cannot write: {reason}", .path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        reason: String,
    },
}

/// The three input tensors of an attention call.
#[derive(Clone, Debug, PartialEq)]
pub struct Inputs {
    /// Queries `[B, Hq, Sq, D]`.
    pub q: Fp8Tensor,
    /// Keys `[B, Hkv, Skv, D]`.
    pub k: Fp8Tensor,
    /// Values `[B, Hkv, Skv, D]`.
    pub v: Fp8Tensor,
}

/// Reads the whole file, telling "missing" from "unreadable".
fn read_file(path: &Path) -> Result<Vec<u8>, IoError> {
    std::fs::read(path).map_err(|source| match source.kind() {
        std::io::ErrorKind::NotFound => IoError::NotFound { path: path.to_path_buf() },
        _ => IoError::Unreadable { path: path.to_path_buf(), source },
    })
}

/// Parses the safetensors header.
fn parse<'a>(path: &Path, bytes: &'a [u8]) -> Result<SafeTensors<'a>, IoError> {
    SafeTensors::deserialize(bytes)
        .map_err(|e| IoError::NotSafetensors { path: path.to_path_buf(), reason: e.to_string() })
}

/// The tensor `name`, or a `MissingTensor` error listing what is there.
fn tensor<'a>(path: &Path, st: &SafeTensors<'a>, name: &str) -> Result<TensorView<'a>, IoError> {
    st.tensor(name).map_err(|_| {
        let mut names = st.names();
        names.sort_unstable();
        IoError::MissingTensor {
            path: path.to_path_buf(),
            name: name.to_string(),
            present: if names.is_empty() { "no tensors".to_string() } else { names.join(", ") },
        }
    })
}

/// Little-endian f32 values of a buffer (any alignment).
fn f32s(bytes: &[u8]) -> Vec<f32> {
    bytes.as_chunks::<4>().0.iter().map(|&c| f32::from_le_bytes(c)).collect()
}

/// Reads the per-head scales `{name}_scale` for an E4M3 tensor.
fn load_scales(path: &Path, st: &SafeTensors, name: &str, heads: usize) -> Result<Vec<f32>, IoError> {
    let scale_name = format!("{name}_scale");
    let Ok(view) = st.tensor(&scale_name) else {
        return Ok(vec![1.0; heads]);
    };
    if view.dtype() != Dtype::F32 {
        return Err(IoError::UnsupportedDtype {
            path: path.to_path_buf(),
            name: scale_name,
            dtype: view.dtype().to_string(),
            expected: "F32",
        });
    }
    let scales = f32s(view.data());
    if scales.len() != heads {
        return Err(IoError::ScaleLength {
            path: path.to_path_buf(),
            name: scale_name,
            tensor: name.to_string(),
            heads,
            actual: scales.len(),
        });
    }
    Ok(scales)
}

/// Reads tensor `name` as an E4M3 tensor, quantizing float inputs.
fn load_tensor(path: &Path, st: &SafeTensors, name: &str) -> Result<Fp8Tensor, IoError> {
    let view = tensor(path, st, name)?;
    let shape: [usize; 4] = view.shape().try_into().map_err(|_| IoError::WrongRank {
        path: path.to_path_buf(),
        name: name.to_string(),
        shape: view.shape().to_vec(),
    })?;
    let heads = shape[1];
    let bytes = view.data();
    let floats: Vec<f32> = match view.dtype() {
        Dtype::F8_E4M3 => {
            let scales = load_scales(path, st, name, heads)?;
            return Ok(quant::from_codes(bytes.to_vec(), shape, scales));
        }
        Dtype::F32 => f32s(bytes),
        Dtype::F16 => bytes.as_chunks::<2>().0.iter().map(|&c| f16::from_le_bytes(c).to_f32()).collect(),
        Dtype::BF16 => bytes.as_chunks::<2>().0.iter().map(|&c| bf16::from_le_bytes(c).to_f32()).collect(),
        other => {
            return Err(IoError::UnsupportedDtype {
                path: path.to_path_buf(),
                name: name.to_string(),
                dtype: other.to_string(),
                expected: "F8_E4M3, F16, BF16 or F32",
            });
        }
    };
    let scale_name = format!("{name}_scale");
    if st.tensor(&scale_name).is_ok() {
        return Err(IoError::UnexpectedScale {
            path: path.to_path_buf(),
            name: scale_name,
            tensor: name.to_string(),
            dtype: view.dtype().to_string(),
        });
    }
    quant::quantize_per_head_named(name, &floats, shape)
        .map_err(|source| IoError::Attn { path: path.to_path_buf(), source })
}

/// Loads `q`, `k` and `v` from a safetensors file (format in the module
/// docs). Shapes are not checked against each other here; the library does
/// that when it runs them.
///
/// # Errors
/// Every problem with the file, as an [`IoError`] naming it.
pub fn load_inputs(path: &Path) -> Result<Inputs, IoError> {
    let bytes = read_file(path)?;
    let st = parse(path, &bytes)?;
    Ok(Inputs { q: load_tensor(path, &st, "q")?, k: load_tensor(path, &st, "k")?, v: load_tensor(path, &st, "v")? })
}

/// Writes `tensors` (name, dtype, shape, little-endian bytes) to `path`.
fn write(path: &Path, tensors: Vec<(String, Dtype, Vec<usize>, Vec<u8>)>) -> Result<(), IoError> {
    let err = |reason: String| IoError::Write { path: path.to_path_buf(), reason };
    let views = tensors
        .iter()
        .map(|(name, dtype, shape, data)| {
            TensorView::new(*dtype, shape.clone(), data)
                .map(|view| (name.clone(), view))
                .map_err(|e| err(format!("tensor `{name}`: {e}")))
        })
        .collect::<Result<Vec<_>, _>>()?;
    safetensors::serialize_to_file(views, None, path).map_err(|e| err(e.to_string()))
}

/// Writes the inputs as `F8_E4M3` tensors `q`, `k`, `v` with `F32` scales
/// `q_scale`, `k_scale`, `v_scale` of shape `[heads]`: the format
/// [`load_inputs`] reads back unchanged.
///
/// # Errors
/// [`IoError::Write`] when the file cannot be written or a tensor's data
/// does not match its shape.
pub fn save_inputs(path: &Path, inputs: &Inputs) -> Result<(), IoError> {
    let mut tensors = Vec::new();
    for (name, t) in [("q", &inputs.q), ("k", &inputs.k), ("v", &inputs.v)] {
        tensors.push((name.to_string(), Dtype::F8_E4M3, t.shape.to_vec(), t.data.clone()));
        let scales: Vec<u8> = t.scales.iter().flat_map(|s| s.to_le_bytes()).collect();
        tensors.push((format!("{name}_scale"), Dtype::F32, vec![t.scales.len()], scales));
    }
    write(path, tensors)
}

/// Writes the output as one tensor `o` of shape `o.shape`, `F16` or `BF16`
/// as the output is.
///
/// # Errors
/// [`IoError::Write`] when the file cannot be written or the data does not
/// match the shape.
pub fn save_output(path: &Path, o: &Output) -> Result<(), IoError> {
    let bytes: Vec<u8> = o.bits.iter().flat_map(|x| x.to_le_bytes()).collect();
    let dtype = match o.dtype {
        OutputDtype::F16 => Dtype::F16,
        OutputDtype::Bf16 => Dtype::BF16,
    };
    write(path, vec![("o".to_string(), dtype, o.shape.to_vec(), bytes)])
}

/// Reads tensor `o` (`F16` or `BF16`, rank 4) back from a file
/// [`save_output`] wrote.
///
/// # Errors
/// As [`load_inputs`], for tensor `o`.
pub fn load_output(path: &Path) -> Result<Output, IoError> {
    let bytes = read_file(path)?;
    let st = parse(path, &bytes)?;
    let view = tensor(path, &st, "o")?;
    let shape: [usize; 4] = view.shape().try_into().map_err(|_| IoError::WrongRank {
        path: path.to_path_buf(),
        name: "o".to_string(),
        shape: view.shape().to_vec(),
    })?;
    let dtype = match view.dtype() {
        Dtype::F16 => OutputDtype::F16,
        Dtype::BF16 => OutputDtype::Bf16,
        other => {
            return Err(IoError::UnsupportedDtype {
                path: path.to_path_buf(),
                name: "o".to_string(),
                dtype: other.to_string(),
                expected: "F16 or BF16",
            });
        }
    };
    let bits = view.data().as_chunks::<2>().0.iter().map(|&c| u16::from_le_bytes(c)).collect();
    Ok(Output { bits, dtype, shape })
}
