//! Safetensors files in and out, for the CLI and the tools.
//!
//! An input file holds tensors `q`, `k` and `v`, each of rank 4
//! (`[batch, heads, seq, head_dim]`), either
//! - `F8_E4M3` codes, with optional `F32` tensors `q_scale`, `k_scale`,
//!   `v_scale` holding one dequantization scale per head (any shape with
//!   that many elements, e.g. `[heads]`; a missing one means 1.0 for every
//!   head), or
//! - `F16`, `BF16` or `F32` values, which are quantized per head by amax
//!   ([`load_inputs`]: on the CPU, [`crate::quant`]; [`load_raw_inputs`]
//!   leaves them to the GPU quantizer, [`crate::quantize`], as `sdpa run`
//!   does); a `*_scale` tensor alongside a float input is an error, as it
//!   would be ignored.
//!
//! The tensors may mix the two kinds. For the `decode` variant
//! ([`load_raw_inputs`] only) the file may add an `I32` tensor `seqused_k`
//! `[B]` (batch `b` sees the first `seqused_k[b]` keys of its cache) and an
//! `I32` page table `page_table` `[B, max_pages]`, with which `k` and `v`
//! are pools of pages `[pages, page_size, Hkv, D]` of `F8_E4M3` codes with
//! scales `[Hkv]` ([`decode`]).
//!
//! A packed batch of sequences of their own lengths ([`load_raw_inputs`]
//! only) adds `I32` prefix sums `cu_seqlens_q` and `cu_seqlens_k` `[B +
//! 1]`; then `q` is `[total_q, Hq, D]` and `k`, `v` are `[total_k, Hkv,
//! D]` (rank 3, codes or floats as above, one scale per head)
//! ([`packed`]).
//!
//! An output file holds one `F16` or `BF16` tensor `o`, and for a run that
//! asks for it the log-sum-exp `lse`, `F32` `[B, Hq, Sq]` (for a packed
//! batch `o` `[total_q, Hq, D]` and `lse` `[total_q, Hq]`).
//!
//! Reading trusts nothing in the file: only a regular file is read, every
//! offset and size in the header is checked against the file's length
//! before anything is sized by it, and every problem is an [`IoError`] with
//! a one-line message (names and parser messages from the file quoted with
//! control characters escaped). `host/tests/hostile.rs` fuzzes this.

use std::collections::HashSet;
use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use half::{bf16, f16};
use safetensors::{Dtype, SafeTensors, tensor::TensorView};
use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use thiserror::Error;

use crate::error::AttnError;
use crate::quant::{self, Rotation, ScaleGroup};
use crate::tensor::{Fp8Input, Fp8Tensor, Output};
use kernels_gpu::quantize::InputDtype;
use kernels_gpu::variant::OutputDtype;

pub mod decode;
pub mod packed;

pub use decode::{DecodeInputs, Lse, PageTable, Planned};
pub use packed::{PackedBatch, PackedOutput};

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
    /// The path names something other than a regular file (a directory, a
    /// device, a pipe): refused before reading, as it may never end.
    #[error("{}: not a regular file", .path.display())]
    NotAFile {
        /// The path.
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
    /// A tensor whose shape is not the one its role needs (the decode
    /// tensors, the pools of a paged cache).
    #[error("{}: tensor `{name}` has shape {shape:?}; expected {expected}", .path.display())]
    WrongShape {
        /// The file.
        path: PathBuf,
        /// The tensor.
        name: String,
        /// Its shape.
        shape: Vec<usize>,
        /// The shape it needs, in words.
        expected: String,
    },
    /// Pools of pages whose page size the kernels cannot read.
    #[error(
        "{}: `{name}` has pages of {page_size} keys (its dimension 1); expected a power of two from {} to {}",
        .path.display(), crate::device::MIN_PAGE_SIZE, crate::device::MAX_PAGE_SIZE
    )]
    PageSize {
        /// The file.
        path: PathBuf,
        /// The pool.
        name: String,
        /// Its second dimension.
        page_size: usize,
    },
    /// A value of `seqused_k` or `page_table` that the kernels would read
    /// outside its range, or a prefix sum of a packed batch that is not one
    /// (not from 0, falling, or not ending at its tensor's rows).
    #[error("{}: `{name}`[{at}] is {value}; expected {range}", .path.display())]
    OutOfRange {
        /// The file.
        path: PathBuf,
        /// The tensor.
        name: &'static str,
        /// The index of the value, e.g. `3` or `1, 2`.
        at: String,
        /// The value.
        value: i32,
        /// The values allowed there, in words.
        range: String,
    },
    /// A decode tensor given to a reader that would ignore it.
    #[error(
        "{}: tensor `{name}` is read by the `decode` path only (`sdpa run`, io::load_raw_inputs); this reader takes contiguous q, k, v",
        .path.display()
    )]
    DecodeTensor {
        /// The file.
        path: PathBuf,
        /// The tensor.
        name: &'static str,
    },
    /// A packed batch's tensor given to a reader that would ignore it.
    #[error(
        "{}: tensor `{name}` makes a packed batch, read by `sdpa run` (io::load_raw_inputs) only; this reader takes [batch, heads, seq, head_dim] q, k, v",
        .path.display()
    )]
    PackedTensor {
        /// The file.
        path: PathBuf,
        /// The tensor.
        name: &'static str,
    },
    /// A decode tensor beside a packed batch's prefix sums: a packed batch
    /// has no cache lengths or page table.
    #[error(
        "{}: tensor `{name}` is given with `cu_seqlens_q`, `cu_seqlens_k`: a packed batch takes no `seqused_k` or `page_table`",
        .path.display()
    )]
    PackedWithDecode {
        /// The file.
        path: PathBuf,
        /// The decode tensor.
        name: &'static str,
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

/// Reads the whole file, telling "missing" from "unreadable". Only a
/// regular file is read, and never more bytes than its length.
fn read_file(path: &Path) -> Result<Vec<u8>, IoError> {
    let unreadable = |source: std::io::Error| match source.kind() {
        std::io::ErrorKind::NotFound => IoError::NotFound { path: path.to_path_buf() },
        _ => IoError::Unreadable { path: path.to_path_buf(), source },
    };
    let file = File::open(path).map_err(unreadable)?;
    let meta = file.metadata().map_err(unreadable)?;
    if !meta.is_file() {
        return Err(IoError::NotAFile { path: path.to_path_buf() });
    }
    let len = usize::try_from(meta.len()).map_err(|_| unreadable(std::io::ErrorKind::OutOfMemory.into()))?;
    let mut bytes = Vec::new();
    bytes.try_reserve_exact(len).map_err(|_| unreadable(std::io::ErrorKind::OutOfMemory.into()))?;
    file.take(meta.len()).read_to_end(&mut bytes).map_err(unreadable)?;
    Ok(bytes)
}

/// Text from the file made safe for a one-line message: control characters
/// escaped, and cut after [`MAX_QUOTED`] characters.
fn printable(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars().take(MAX_QUOTED) {
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    if text.chars().nth(MAX_QUOTED).is_some() {
        out.push_str("...");
    }
    out
}

/// The most characters of a name or parser message quoted in an error.
const MAX_QUOTED: usize = 200;

/// The most tensor names a `MissingTensor` message lists.
const MAX_LISTED: usize = 16;

/// A `not a safetensors file` error.
fn not_safetensors(path: &Path, reason: &str) -> IoError {
    IoError::NotSafetensors { path: path.to_path_buf(), reason: printable(reason) }
}

/// A header's entries in file order, a name given twice kept twice (a JSON
/// map would keep only the last).
struct HeaderEntries(Vec<(String, serde_json::Value)>);

impl<'de> Deserialize<'de> for HeaderEntries {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Entries;
        impl<'de> Visitor<'de> for Entries {
            type Value = HeaderEntries;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<HeaderEntries, A::Error> {
                let mut entries = Vec::new();
                while let Some(entry) = map.next_entry()? {
                    entries.push(entry);
                }
                Ok(HeaderEntries(entries))
            }
        }
        deserializer.deserialize_map(Entries)
    }
}

/// Checks what the safetensors parser takes on trust: no tensor is named
/// twice, and no `data_offsets` value lies past the data section (the
/// parser adds offsets up unchecked). Headers it cannot even read are left
/// to the parser to report.
fn check_header(path: &Path, bytes: &[u8]) -> Result<(), IoError> {
    let Some((length, rest)) = bytes.split_first_chunk::<8>() else { return Ok(()) };
    let length = usize::try_from(u64::from_le_bytes(*length)).ok().filter(|&n| n <= MAX_HEADER_BYTES);
    let Some(header) = length.and_then(|n| rest.get(..n)) else { return Ok(()) };
    let Ok(HeaderEntries(entries)) = serde_json::from_slice(header) else { return Ok(()) };
    let data_len = (rest.len() - header.len()) as u64;
    let mut seen = HashSet::new();
    for (name, entry) in &entries {
        if !seen.insert(name) {
            return Err(not_safetensors(path, &format!("tensor `{name}` is named twice")));
        }
        let offsets = entry.get("data_offsets").and_then(serde_json::Value::as_array);
        if offsets.is_some_and(|o| o.iter().any(|x| x.as_u64().is_some_and(|x| x > data_len))) {
            return Err(not_safetensors(
                path,
                &format!("tensor `{name}` has data_offsets past the end of the {data_len} data bytes"),
            ));
        }
    }
    Ok(())
}

/// The longest header the safetensors parser reads (its limit).
const MAX_HEADER_BYTES: usize = 100_000_000;

/// Parses the safetensors header.
fn parse<'a>(path: &Path, bytes: &'a [u8]) -> Result<SafeTensors<'a>, IoError> {
    check_header(path, bytes)?;
    SafeTensors::deserialize(bytes).map_err(|e| not_safetensors(path, &e.to_string()))
}

/// The tensor `name`, or a `MissingTensor` error listing what is there.
fn tensor<'a>(path: &Path, st: &SafeTensors<'a>, name: &str) -> Result<TensorView<'a>, IoError> {
    st.tensor(name).map_err(|_| missing(path, st, name))
}

/// The `MissingTensor` error for `name`, listing what the file holds.
fn missing(path: &Path, st: &SafeTensors, name: &str) -> IoError {
    let mut names = st.names();
    names.sort_unstable();
    let mut present: Vec<String> = names.iter().take(MAX_LISTED).map(|n| printable(n)).collect();
    if names.len() > MAX_LISTED {
        present.push(format!("and {} more", names.len() - MAX_LISTED));
    }
    IoError::MissingTensor {
        path: path.to_path_buf(),
        name: name.to_string(),
        present: if names.is_empty() { "no tensors".to_string() } else { present.join(", ") },
    }
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

/// One input tensor as its file holds it: E4M3 codes with their scales, or
/// float values still to be quantized.
#[derive(Debug)]
pub enum InputTensor {
    /// `F8_E4M3` codes and per-head scales.
    Fp8(Fp8Tensor),
    /// `F16`, `BF16` or `F32` values, all finite.
    Float(FloatTensor),
}

/// A float tensor `[batch, heads, seq, head_dim]` as read from a file (a
/// packed batch's `[rows, heads, head_dim]` as `[rows, heads, 1,
/// head_dim]`).
#[derive(Debug)]
pub struct FloatTensor {
    /// The elements' little-endian bytes, row-major.
    pub bytes: Vec<u8>,
    /// The element type.
    pub dtype: InputDtype,
    /// `[batch, heads, seq, head_dim]`.
    pub shape: [usize; 4],
    /// The per-head scales the GPU quantizer will give these values under
    /// the rotation they were read for ([`quant::scales_as_gpu`]): what
    /// validation reads before the GPU is touched.
    pub scales: Vec<f32>,
}

impl FloatTensor {
    /// The values, widened to f32.
    pub fn values(&self) -> Vec<f32> {
        let bytes = &self.bytes;
        match self.dtype {
            InputDtype::F32 => f32s(bytes),
            InputDtype::F16 => bytes.as_chunks::<2>().0.iter().map(|&c| f16::from_le_bytes(c).to_f32()).collect(),
            InputDtype::Bf16 => bytes.as_chunks::<2>().0.iter().map(|&c| bf16::from_le_bytes(c).to_f32()).collect(),
        }
    }
}

/// What validation reads: the shape, the element count, and the scales (a
/// float tensor's as the GPU quantizer will compute them).
impl Fp8Input for InputTensor {
    fn shape(&self) -> [usize; 4] {
        match self {
            InputTensor::Fp8(t) => t.shape,
            InputTensor::Float(t) => t.shape,
        }
    }
    fn code_count(&self) -> usize {
        match self {
            InputTensor::Fp8(t) => t.data.len(),
            InputTensor::Float(t) => t.bytes.len() / t.dtype.bytes(),
        }
    }
    fn scales(&self) -> &[f32] {
        match self {
            InputTensor::Fp8(t) => &t.scales,
            InputTensor::Float(t) => &t.scales,
        }
    }
}

/// Reads tensor `name` as its file holds it, a float tensor's scales
/// computed as the GPU quantizer will under `rotation`. Float values must
/// be finite (an error names the first one that is not, as the per-head
/// quantizer does).
fn read_tensor(path: &Path, st: &SafeTensors, name: &'static str, rotation: Rotation) -> Result<InputTensor, IoError> {
    let view = tensor(path, st, name)?;
    let shape: [usize; 4] = view.shape().try_into().map_err(|_| IoError::WrongRank {
        path: path.to_path_buf(),
        name: name.to_string(),
        shape: view.shape().to_vec(),
    })?;
    read_values(path, st, name, &view, shape, rotation)
}

/// Reads `view`, tensor `name`, as `shape` (`[batch, heads, seq,
/// head_dim]`, its own elements in its own order): codes with their
/// `{name}_scale`, or float values with the scales the GPU quantizer will
/// give them under `rotation` (see [`read_tensor`]).
fn read_values(
    path: &Path,
    st: &SafeTensors,
    name: &'static str,
    view: &TensorView,
    shape: [usize; 4],
    rotation: Rotation,
) -> Result<InputTensor, IoError> {
    // A zero-sized dimension holds no data, so the others are not bounded by
    // the file: refuse it before anything is sized by them (the scales).
    if shape.contains(&0) {
        let source = AttnError::ZeroDimension { tensor: name, shape };
        return Err(IoError::Attn { path: path.to_path_buf(), source });
    }
    let heads = shape[1];
    let bytes = view.data();
    let dtype = match view.dtype() {
        Dtype::F8_E4M3 => {
            let scales = load_scales(path, st, name, heads)?;
            return Ok(InputTensor::Fp8(quant::from_codes(bytes.to_vec(), shape, scales)));
        }
        Dtype::F32 => InputDtype::F32,
        Dtype::F16 => InputDtype::F16,
        Dtype::BF16 => InputDtype::Bf16,
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
    let mut t = FloatTensor { bytes: bytes.to_vec(), dtype, shape, scales: Vec::new() };
    let values = t.values();
    if let Some(flat) = values.iter().position(|x| !x.is_finite()) {
        // The message the per-head quantizer gives for the same input.
        let x = values[flat];
        let [_, _, seq, dim] = shape;
        let (b, h, s, d) = (flat / (heads * seq * dim), flat / (seq * dim) % heads, flat / dim % seq, flat % dim);
        let source = AttnError::InvalidScale {
            what: format!("{name} scale of head {h} (amax / 448; element [{b}, {h}, {s}, {d}] is {x})"),
            value: x.abs() / kernels_gpu::fp8::E4M3_MAX,
        };
        return Err(IoError::Attn { path: path.to_path_buf(), source });
    }
    t.scales = quant::scales_as_gpu(name, &values, shape, rotation, ScaleGroup::PerHead)
        .map_err(|source| IoError::Attn { path: path.to_path_buf(), source })?
        .0;
    Ok(InputTensor::Float(t))
}

/// Reads tensor `name` as an E4M3 tensor, quantizing float inputs per head
/// on the CPU.
fn load_tensor(path: &Path, st: &SafeTensors, name: &'static str) -> Result<Fp8Tensor, IoError> {
    match read_tensor(path, st, name, Rotation::None)? {
        InputTensor::Fp8(t) => Ok(t),
        InputTensor::Float(t) => quant::quantize_per_head_named(name, &t.values(), t.shape)
            .map_err(|source| IoError::Attn { path: path.to_path_buf(), source }),
    }
}

/// `q`, `k` and `v` as their file holds them (see [`InputTensor`]), and
/// the decode tensors or the packed batch's prefix sums it adds.
#[derive(Debug)]
pub struct RawInputs {
    /// Queries `[B, Hq, Sq, D]`; in a packed batch `[total_q, Hq, 1, D]`
    /// (the file's `[total_q, Hq, D]`).
    pub q: InputTensor,
    /// Keys `[B, Hkv, Skv, D]`; with a page table, the pool of key pages
    /// `[pages, page_size, Hkv, D]` (E4M3 codes); in a packed batch
    /// `[total_k, Hkv, 1, D]`.
    pub k: InputTensor,
    /// Values, as `k`.
    pub v: InputTensor,
    /// `seqused_k` and `page_table`, where the file holds them.
    pub decode: DecodeInputs,
    /// `cu_seqlens_q` and `cu_seqlens_k`, where the file holds them (then
    /// `decode` is empty).
    pub packed: Option<PackedBatch>,
}

impl RawInputs {
    /// `q`, `k` and `v` as a plan sees them (for [`crate::validate::validate`]):
    /// pools as the contiguous cache their page table makes of them, a
    /// packed batch's tensors as `[B, H, longest, D]` (its longest
    /// sequence's grid; [`crate::validate::Problem::packed`] plans the
    /// rows).
    pub fn planned(&self) -> [Planned<'_>; 3] {
        if let Some(batch) = &self.packed {
            let [max_q, max_k] = batch.max_seqlen();
            let b = batch.batch();
            return [
                packed::planned(&self.q, b, max_q),
                packed::planned(&self.k, b, max_k),
                packed::planned(&self.v, b, max_k),
            ];
        }
        let kv = |t| match &self.decode.page_table {
            Some(table) => Planned::paged(t, table),
            None => Planned::contiguous(t),
        };
        [Planned::contiguous(&self.q), kv(&self.k), kv(&self.v)]
    }
}

/// Loads `q`, `k` and `v` from a safetensors file (format in the module
/// docs) as the file holds them, with its decode tensors or prefix sums:
/// float tensors are left for the GPU quantizer (`sdpa run`), with the
/// scales it will give them, float `q` and `k` rotated as `qk_rotation`
/// says. The decode tensors are checked against `q`'s batch and the pools
/// ([`decode`]), the prefix sums against the rows of `q` and `k`
/// ([`packed`]); shapes of q, k and v are not checked against each other
/// here.
///
/// # Errors
/// Every problem with the file, as an [`IoError`] naming it.
pub fn load_raw_inputs(path: &Path, qk_rotation: Rotation) -> Result<RawInputs, IoError> {
    let bytes = read_file(path)?;
    let st = parse(path, &bytes)?;
    if let Some(batch) = packed::read_prefix_sums(path, &st)? {
        return load_packed(path, &st, batch, qk_rotation);
    }
    let q = read_tensor(path, &st, "q", qk_rotation)?;
    let batch = q.shape()[0];
    let Some(table) = decode::read_page_table(path, &st, batch)? else {
        let k = read_tensor(path, &st, "k", qk_rotation)?;
        let v = read_tensor(path, &st, "v", Rotation::None)?;
        let seq_used_k = decode::read_seq_used_k(path, &st, batch, k.shape()[2])?;
        return Ok(RawInputs { q, k, v, decode: DecodeInputs { seq_used_k, page_table: None }, packed: None });
    };
    let k = decode::read_pool(path, &st, "k")?;
    let v = decode::read_pool(path, &st, "v")?;
    if v.shape != k.shape {
        return Err(IoError::WrongShape {
            path: path.to_path_buf(),
            name: "v".to_string(),
            shape: v.shape.to_vec(),
            expected: format!("{:?}, the shape of the `k` pool", k.shape),
        });
    }
    let [pages, page_size, _, _] = k.shape;
    let seq_used_k = decode::read_seq_used_k(path, &st, batch, table.max_pages * page_size)?;
    decode::check_pages(path, &table, pages, page_size, seq_used_k.as_deref())?;
    Ok(RawInputs {
        q,
        k: InputTensor::Fp8(k),
        v: InputTensor::Fp8(v),
        decode: DecodeInputs { seq_used_k, page_table: Some(table) },
        packed: None,
    })
}

/// The rest of [`load_raw_inputs`] for a file with prefix sums `batch`:
/// no decode tensor, `q`, `k` and `v` of rank 3 (`v` of `k`'s shape), and
/// the sums checked against their rows.
fn load_packed(path: &Path, st: &SafeTensors, batch: PackedBatch, qk_rotation: Rotation) -> Result<RawInputs, IoError> {
    for name in [decode::SEQ_USED_K, decode::PAGE_TABLE] {
        packed::refuse_decode_tensor(path, st, name)?;
    }
    let q = packed::read_rows(path, st, "q", qk_rotation)?;
    let k = packed::read_rows(path, st, "k", qk_rotation)?;
    let v = packed::read_rows(path, st, "v", Rotation::None)?;
    if v.shape() != k.shape() {
        let [rows, heads, _, head_dim] = k.shape();
        let [v_rows, v_heads, _, v_dim] = v.shape();
        return Err(IoError::WrongShape {
            path: path.to_path_buf(),
            name: "v".to_string(),
            shape: vec![v_rows, v_heads, v_dim],
            expected: format!("[{rows}, {heads}, {head_dim}], the shape of `k`"),
        });
    }
    packed::check_prefix_sums(path, packed::CU_SEQLENS_Q, &batch.cu_seqlens_q, q.shape()[0])?;
    packed::check_prefix_sums(path, packed::CU_SEQLENS_K, &batch.cu_seqlens_k, k.shape()[0])?;
    Ok(RawInputs { q, k, v, decode: DecodeInputs::default(), packed: Some(batch) })
}

/// Loads `q`, `k` and `v` from a safetensors file (format in the module
/// docs). Shapes are not checked against each other here; the library does
/// that when it runs them. A file with decode tensors or prefix sums is
/// refused: they change what `q`, `k` and `v` are ([`load_raw_inputs`]
/// reads them).
///
/// # Errors
/// Every problem with the file, as an [`IoError`] naming it.
pub fn load_inputs(path: &Path) -> Result<Inputs, IoError> {
    let bytes = read_file(path)?;
    let st = parse(path, &bytes)?;
    if let Some(name) = [decode::SEQ_USED_K, decode::PAGE_TABLE].into_iter().find(|n| st.tensor(n).is_ok()) {
        return Err(IoError::DecodeTensor { path: path.to_path_buf(), name });
    }
    if let Some(name) = [packed::CU_SEQLENS_Q, packed::CU_SEQLENS_K].into_iter().find(|n| st.tensor(n).is_ok()) {
        return Err(IoError::PackedTensor { path: path.to_path_buf(), name });
    }
    Ok(Inputs { q: load_tensor(path, &st, "q")?, k: load_tensor(path, &st, "k")?, v: load_tensor(path, &st, "v")? })
}

/// One tensor to write: name, dtype, shape, little-endian bytes.
type Tensor = (String, Dtype, Vec<usize>, Vec<u8>);

/// The safetensors bytes of `tensors`, for a file at `path` (named in errors).
fn serialize(path: &Path, tensors: Vec<Tensor>) -> Result<Vec<u8>, IoError> {
    let err = |reason: String| IoError::Write { path: path.to_path_buf(), reason };
    let views = tensors
        .iter()
        .map(|(name, dtype, shape, data)| {
            TensorView::new(*dtype, shape.clone(), data)
                .map(|view| (name.clone(), view))
                .map_err(|e| err(format!("tensor `{name}`: {e}")))
        })
        .collect::<Result<Vec<_>, _>>()?;
    safetensors::serialize(views, None).map_err(|e| err(e.to_string()))
}

/// Writes `tensors` to `path`.
fn write(path: &Path, tensors: Vec<Tensor>) -> Result<(), IoError> {
    let bytes = serialize(path, tensors)?;
    std::fs::write(path, bytes).map_err(|e| IoError::Write { path: path.to_path_buf(), reason: e.to_string() })
}

/// Writes the inputs as `F8_E4M3` tensors `q`, `k`, `v` with `F32` scales
/// `q_scale`, `k_scale`, `v_scale` of shape `[heads]`: the format
/// [`load_inputs`] reads back unchanged.
///
/// # Errors
/// [`IoError::Write`] when the file cannot be written or a tensor's data
/// does not match its shape.
pub fn save_inputs(path: &Path, inputs: &Inputs) -> Result<(), IoError> {
    save_decode_inputs(path, inputs, &DecodeInputs::default())
}

/// As [`save_inputs`], with the decode tensors `seqused_k` and
/// `page_table` where `decode` has them (then `inputs.k` and `inputs.v`
/// are pools `[pages, page_size, Hkv, D]`, their scales one per key/value
/// head): the format [`load_raw_inputs`] reads back unchanged.
///
/// # Errors
/// As [`save_inputs`].
pub fn save_decode_inputs(path: &Path, inputs: &Inputs, decode: &DecodeInputs) -> Result<(), IoError> {
    let mut tensors: Vec<Tensor> = Vec::new();
    for (name, t) in [("q", &inputs.q), ("k", &inputs.k), ("v", &inputs.v)] {
        tensors.push((name.to_string(), Dtype::F8_E4M3, t.shape.to_vec(), t.data.clone()));
        let scales: Vec<u8> = t.scales.iter().flat_map(|s| s.to_le_bytes()).collect();
        tensors.push((format!("{name}_scale"), Dtype::F32, vec![t.scales.len()], scales));
    }
    let i32_bytes = |values: &[i32]| values.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    if let Some(lens) = &decode.seq_used_k {
        tensors.push((decode::SEQ_USED_K.to_string(), Dtype::I32, vec![lens.len()], i32_bytes(lens)));
    }
    if let Some(table) = &decode.page_table {
        let shape = vec![table.batch, table.max_pages];
        tensors.push((decode::PAGE_TABLE.to_string(), Dtype::I32, shape, i32_bytes(&table.entries)));
    }
    write(path, tensors)
}

/// One input tensor of a packed batch to write: E4M3 codes `[rows, heads,
/// head_dim]` row-major and one scale per head.
#[derive(Clone, Copy, Debug)]
pub struct PackedCodes<'a> {
    /// The codes.
    pub codes: &'a [u8],
    /// `[rows, heads, head_dim]`.
    pub shape: [usize; 3],
    /// One dequantization scale per head.
    pub scales: &'a [f32],
}

/// Writes a packed batch: `q`, `k`, `v` as `F8_E4M3` `[rows, heads,
/// head_dim]` with `F32` scales `[heads]`, and `batch`'s prefix sums as
/// `I32` `cu_seqlens_q`, `cu_seqlens_k`: the format [`load_raw_inputs`]
/// reads back unchanged.
///
/// # Errors
/// As [`save_inputs`].
pub fn save_packed_inputs(path: &Path, [q, k, v]: [PackedCodes; 3], batch: &PackedBatch) -> Result<(), IoError> {
    let mut tensors: Vec<Tensor> = Vec::new();
    for (name, t) in [("q", q), ("k", k), ("v", v)] {
        tensors.push((name.to_string(), Dtype::F8_E4M3, t.shape.to_vec(), t.codes.to_vec()));
        let scales: Vec<u8> = t.scales.iter().flat_map(|s| s.to_le_bytes()).collect();
        tensors.push((format!("{name}_scale"), Dtype::F32, vec![t.scales.len()], scales));
    }
    for (name, cu) in [(packed::CU_SEQLENS_Q, &batch.cu_seqlens_q), (packed::CU_SEQLENS_K, &batch.cu_seqlens_k)] {
        let bytes = cu.iter().flat_map(|x| x.to_le_bytes()).collect();
        tensors.push((name.to_string(), Dtype::I32, vec![cu.len()], bytes));
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
    OutputFile::create(path)?.write(o, None)
}

/// An output file opened before the work that fills it, so that a path
/// that cannot be written fails first. An existing file keeps its contents
/// until [`OutputFile::write`] replaces them; a file this created is
/// removed again if it is dropped unwritten.
#[derive(Debug)]
pub struct OutputFile {
    path: PathBuf,
    file: File,
    created: bool,
    written: bool,
}

impl OutputFile {
    /// Opens `path` for writing, creating it if absent.
    ///
    /// # Errors
    /// [`IoError::Write`] when it cannot be opened for writing (a missing
    /// directory, no permission, a directory).
    pub fn create(path: &Path) -> Result<OutputFile, IoError> {
        let err = |e: std::io::Error| IoError::Write { path: path.to_path_buf(), reason: e.to_string() };
        let (file, created) = match OpenOptions::new().write(true).create_new(true).open(path) {
            Ok(file) => (file, true),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                (OpenOptions::new().write(true).open(path).map_err(err)?, false)
            }
            Err(e) => return Err(err(e)),
        };
        Ok(OutputFile { path: path.to_path_buf(), file, created, written: false })
    }

    /// Replaces the file's contents with the output as tensor `o`, `F16`
    /// or `BF16` as the output is, and `lse` (`F32` `[B, Hq, Sq]`) where
    /// given.
    ///
    /// # Errors
    /// [`IoError::Write`] when the file cannot be written or the data does
    /// not match the shape.
    pub fn write(self, o: &Output, lse: Option<&Lse>) -> Result<(), IoError> {
        let lse = lse.map(|lse| (&lse.values[..], lse.shape.to_vec()));
        self.replace(&o.bits, o.dtype, o.shape.to_vec(), lse)
    }

    /// Replaces the file's contents with a packed batch's output: `o`
    /// `[total_q, Hq, D]`, `F16` or `BF16`, and `lse` (`F32` `[total_q,
    /// Hq]`) where it has one.
    ///
    /// # Errors
    /// As [`OutputFile::write`].
    pub fn write_packed(self, out: &PackedOutput) -> Result<(), IoError> {
        let [rows, heads, _] = out.shape;
        let lse = out.lse.as_ref().map(|values| (&values[..], vec![rows, heads]));
        self.replace(&out.bits, out.dtype, out.shape.to_vec(), lse)
    }

    /// Writes `o` (`bits` of `dtype`, `shape`) and the log-sum-exp
    /// `(values, shape)` where given, replacing what the file held.
    fn replace(
        mut self,
        bits: &[u16],
        dtype: OutputDtype,
        shape: Vec<usize>,
        lse: Option<(&[f32], Vec<usize>)>,
    ) -> Result<(), IoError> {
        let data: Vec<u8> = bits.iter().flat_map(|x| x.to_le_bytes()).collect();
        let dtype = match dtype {
            OutputDtype::F16 => Dtype::F16,
            OutputDtype::Bf16 => Dtype::BF16,
        };
        let mut tensors = vec![("o".to_string(), dtype, shape, data)];
        if let Some((values, shape)) = lse {
            let data = values.iter().flat_map(|x| x.to_le_bytes()).collect();
            tensors.push((decode::LSE.to_string(), Dtype::F32, shape, data));
        }
        let bytes = serialize(&self.path, tensors)?;
        let err = |e: std::io::Error| IoError::Write { path: self.path.clone(), reason: e.to_string() };
        // (A device such as /dev/null cannot be truncated, nor needs to be.)
        if self.file.metadata().map_err(err)?.is_file() {
            self.file.set_len(0).map_err(err)?;
        }
        self.file.write_all(&bytes).map_err(err)?;
        self.written = true;
        Ok(())
    }
}

impl Drop for OutputFile {
    fn drop(&mut self) {
        if self.created && !self.written {
            let _ = std::fs::remove_file(&self.path);
        }
    }
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
    let (bits, dtype) = output_bits(path, &view)?;
    Ok(Output { bits, dtype, shape })
}

/// An output tensor `o`'s 16-bit values and their type (F16 or BF16).
pub(crate) fn output_bits(path: &Path, view: &TensorView) -> Result<(Vec<u16>, OutputDtype), IoError> {
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
    Ok((view.data().as_chunks::<2>().0.iter().map(|&c| u16::from_le_bytes(c)).collect(), dtype))
}

/// Reads tensor `lse` (`F32` `[B, Hq, Sq]`) back from a file an
/// [`OutputFile`] wrote with it.
///
/// # Errors
/// As [`load_output`], for tensor `lse`.
pub fn load_lse(path: &Path) -> Result<Lse, IoError> {
    let bytes = read_file(path)?;
    let st = parse(path, &bytes)?;
    let view = tensor(path, &st, decode::LSE)?;
    let shape: [usize; 3] = view.shape().try_into().map_err(|_| IoError::WrongShape {
        path: path.to_path_buf(),
        name: decode::LSE.to_string(),
        shape: view.shape().to_vec(),
        expected: "rank 3 [batch, heads_q, seq_q]".to_string(),
    })?;
    if view.dtype() != Dtype::F32 {
        return Err(IoError::UnsupportedDtype {
            path: path.to_path_buf(),
            name: decode::LSE.to_string(),
            dtype: view.dtype().to_string(),
            expected: "F32",
        });
    }
    Ok(Lse { values: f32s(view.data()), shape })
}

/// Reads a packed batch's output back from a file
/// [`OutputFile::write_packed`] wrote: `o` (`F16` or `BF16` `[total_q, Hq,
/// D]`) and `lse` (`F32` `[total_q, Hq]`) if it holds one.
///
/// # Errors
/// As [`load_output`].
pub fn load_packed_output(path: &Path) -> Result<PackedOutput, IoError> {
    let bytes = read_file(path)?;
    let st = parse(path, &bytes)?;
    packed::read_output(path, &st)
}
