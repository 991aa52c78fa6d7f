//! A packed batch in a file (FlashAttention's variable-length layout,
//! [`crate::Attention::run_packed`]): `cu_seqlens_q` and `cu_seqlens_k`,
//! int32 prefix sums `[B + 1]` of the sequences' query and key lengths,
//! with which `q` is `[total_q, Hq, D]` and `k`, `v` are `[total_k, Hkv,
//! D]`; the output file's `o` is `[total_q, Hq, D]` and its `lse`
//! `[total_q, Hq]`.
//!
//! The library reads the prefix sums on the device only, where a bad value
//! gives wrong rows; the reader has them on the host and refuses any that
//! do not start at 0, fall, or end anywhere but at the rows of `q` and `k`.

use std::path::Path;

use safetensors::{Dtype, SafeTensors};

use super::decode::read_i32s;
use super::{InputTensor, IoError, Planned, Rotation, missing, read_values, tensor};
use crate::error::AttnError;
use crate::tensor::Fp8Input;
use kernels_gpu::variant::OutputDtype;

/// The name of the query prefix sums in an input file.
pub const CU_SEQLENS_Q: &str = "cu_seqlens_q";

/// The name of the key prefix sums in an input file.
pub const CU_SEQLENS_K: &str = "cu_seqlens_k";

/// The prefix sums of a packed batch's sequence lengths, as checked by the
/// reader: `batch + 1` values each, from 0, non-decreasing, ending at the
/// rows of Q (of K and V).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PackedBatch {
    /// Sequence `b` has queries `cu_seqlens_q[b] .. cu_seqlens_q[b + 1]`.
    pub cu_seqlens_q: Vec<i32>,
    /// Sequence `b` has keys `cu_seqlens_k[b] .. cu_seqlens_k[b + 1]`.
    pub cu_seqlens_k: Vec<i32>,
}

impl PackedBatch {
    /// The prefix sums of `lens_q` and `lens_k` (one pair per sequence).
    ///
    /// # Errors
    /// [`AttnError::ShapeMismatch`] for lists of different lengths or
    /// none; [`AttnError::TooLarge`] for totals past `i32`.
    pub fn from_lengths(lens_q: &[usize], lens_k: &[usize]) -> Result<PackedBatch, AttnError> {
        if lens_q.len() != lens_k.len() || lens_q.is_empty() {
            return Err(AttnError::ShapeMismatch(format!(
                "{} query lengths and {} key lengths: one of each per sequence, at least one sequence",
                lens_q.len(),
                lens_k.len()
            )));
        }
        let sums = |lens: &[usize]| -> Result<Vec<i32>, AttnError> {
            let mut at = 0i32;
            let mut out = vec![0];
            for &len in lens {
                at = i32::try_from(len).ok().and_then(|len| at.checked_add(len)).ok_or_else(|| {
                    AttnError::TooLarge(format!("sequence lengths {lens:?} add up past the int32 prefix sums"))
                })?;
                out.push(at);
            }
            Ok(out)
        };
        Ok(PackedBatch { cu_seqlens_q: sums(lens_q)?, cu_seqlens_k: sums(lens_k)? })
    }

    /// Sequences in the batch.
    pub fn batch(&self) -> usize {
        self.cu_seqlens_q.len().saturating_sub(1)
    }

    /// Each sequence's `(queries, keys)` (a falling pair, which the reader
    /// refuses, as 0).
    pub fn lengths(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        let lens =
            |cu: &[i32]| cu.windows(2).map(|w| (i64::from(w[1]) - i64::from(w[0])).max(0) as usize).collect::<Vec<_>>();
        lens(&self.cu_seqlens_q).into_iter().zip(lens(&self.cu_seqlens_k))
    }

    /// The longest query and key lengths, `[queries, keys]`.
    pub fn max_seqlen(&self) -> [usize; 2] {
        self.lengths().fold([0, 0], |[mq, mk], (q, k)| [mq.max(q), mk.max(k)])
    }

    /// Rows of Q and of K, `[total_q, total_k]`.
    pub fn totals(&self) -> [usize; 2] {
        [&self.cu_seqlens_q, &self.cu_seqlens_k].map(|cu| cu.last().map_or(0, |&n| n.max(0) as usize))
    }
}

/// Reads the prefix sums if the file has either (then it must have both,
/// of one length `[B + 1]`, B >= 1); their values are checked by
/// [`check_prefix_sums`] once the rows of `q` and `k` are known.
pub(super) fn read_prefix_sums(path: &Path, st: &SafeTensors) -> Result<Option<PackedBatch>, IoError> {
    if st.tensor(CU_SEQLENS_Q).is_err() && st.tensor(CU_SEQLENS_K).is_err() {
        return Ok(None);
    }
    let rank_1 = |shape: &[usize]| matches!(shape, &[n] if n >= 2);
    let expected = "[B + 1], B >= 1: the prefix sums of B sequences' lengths, from 0";
    let read = |name| read_i32s(path, st, name, expected, rank_1)?.ok_or_else(|| missing(path, st, name));
    let (cu_seqlens_q, cu_seqlens_k) = (read(CU_SEQLENS_Q)?, read(CU_SEQLENS_K)?);
    if cu_seqlens_k.len() != cu_seqlens_q.len() {
        return Err(IoError::WrongShape {
            path: path.to_path_buf(),
            name: CU_SEQLENS_K.to_string(),
            shape: vec![cu_seqlens_k.len()],
            expected: format!(
                "[{}], the length of `{CU_SEQLENS_Q}` (one entry per sequence, and one)",
                cu_seqlens_q.len()
            ),
        });
    }
    Ok(Some(PackedBatch { cu_seqlens_q, cu_seqlens_k }))
}

/// Checks the prefix sums `name` of a tensor of `rows` rows: 0 first,
/// non-decreasing, `rows` last.
pub(super) fn check_prefix_sums(path: &Path, name: &'static str, cu: &[i32], rows: usize) -> Result<(), IoError> {
    let out_of_range = |at: usize, value: i32, range: String| IoError::OutOfRange {
        path: path.to_path_buf(),
        name,
        at: at.to_string(),
        value,
        range,
    };
    let last = cu.len() - 1;
    for (at, &value) in cu.iter().enumerate() {
        let previous = if at == 0 { 0 } else { cu[at - 1] };
        if at == 0 && value != 0 {
            return Err(out_of_range(at, value, "0 (prefix sums start at 0)".to_string()));
        }
        if at == last && usize::try_from(value).ok() != Some(rows) {
            return Err(out_of_range(at, value, format!("{rows}, the rows of the tensor it indexes")));
        }
        if !usize::try_from(value).is_ok_and(|v| v <= rows) || value < previous {
            return Err(out_of_range(
                at,
                value,
                format!("{previous} ..= {rows} (non-decreasing, at most the rows of the tensor it indexes)"),
            ));
        }
    }
    Ok(())
}

/// Reads `q`, `k` or `v` of a packed batch, `[rows, heads, head_dim]`
/// (rank 3), as [`InputTensor`] does a dense one, held as `[rows, heads,
/// 1, head_dim]`: each row a batch of one position, which is how its bytes
/// lie and its per-head scales (and the GPU quantizer's) read it.
pub(super) fn read_rows(
    path: &Path,
    st: &SafeTensors,
    name: &'static str,
    rotation: Rotation,
) -> Result<InputTensor, IoError> {
    let view = tensor(path, st, name)?;
    let [rows, heads, head_dim]: [usize; 3] = view.shape().try_into().map_err(|_| IoError::WrongShape {
        path: path.to_path_buf(),
        name: name.to_string(),
        shape: view.shape().to_vec(),
        expected: format!(
            "rank 3 [total_rows, heads, head_dim] (a packed batch, as `{CU_SEQLENS_Q}` and `{CU_SEQLENS_K}` are given)"
        ),
    })?;
    read_values(path, st, name, &view, [rows, heads, 1, head_dim], rotation)
}

/// Refuses a file whose decode tensor `name` sits beside the prefix sums:
/// a packed batch has no cache lengths or page table.
pub(super) fn refuse_decode_tensor(path: &Path, st: &SafeTensors, name: &'static str) -> Result<(), IoError> {
    match st.tensor(name) {
        Ok(_) => Err(IoError::PackedWithDecode { path: path.to_path_buf(), name }),
        Err(_) => Ok(()),
    }
}

/// The planned views of a packed batch's tensors (for
/// [`crate::validate::validate`], whose scale checks the packed problem
/// needs too): `[B, heads, longest, head_dim]`, the grid the plan covers.
pub(super) fn planned(tensor: &InputTensor, batch: usize, longest: usize) -> Planned<'_> {
    let [_, heads, _, head_dim] = tensor.shape();
    Planned::with_shape(tensor, [batch, heads, longest, head_dim])
}

/// A packed batch's output as an output file holds it: `o` `[total_q,
/// heads_q, head_dim]`, and `lse` `[total_q, heads_q]` where asked for.
#[derive(Clone, Debug, PartialEq)]
pub struct PackedOutput {
    /// The output's 16-bit bits, row-major `[total_q, heads_q, head_dim]`.
    pub bits: Vec<u16>,
    /// Whether the bits are f16 or bf16.
    pub dtype: OutputDtype,
    /// `[total_q, heads_q, head_dim]`.
    pub shape: [usize; 3],
    /// Each query row's log-sum-exp, `[total_q, heads_q]` row-major, `-inf`
    /// for a row that sees no key.
    pub lse: Option<Vec<f32>>,
}

/// Reads a packed output file back: `o` (`F16` or `BF16`, rank 3) and
/// `lse` (`F32` `[total_q, heads_q]`) if present.
pub(super) fn read_output(path: &Path, st: &SafeTensors) -> Result<PackedOutput, IoError> {
    let view = tensor(path, st, "o")?;
    let shape: [usize; 3] = view.shape().try_into().map_err(|_| IoError::WrongShape {
        path: path.to_path_buf(),
        name: "o".to_string(),
        shape: view.shape().to_vec(),
        expected: "rank 3 [total_q, heads_q, head_dim] (a packed batch's output)".to_string(),
    })?;
    let (bits, dtype) = super::output_bits(path, &view)?;
    let lse = match st.tensor(super::decode::LSE) {
        Err(_) => None,
        Ok(lse) => {
            if lse.dtype() != Dtype::F32 {
                return Err(IoError::UnsupportedDtype {
                    path: path.to_path_buf(),
                    name: super::decode::LSE.to_string(),
                    dtype: lse.dtype().to_string(),
                    expected: "F32",
                });
            }
            if lse.shape() != [shape[0], shape[1]] {
                return Err(IoError::WrongShape {
                    path: path.to_path_buf(),
                    name: super::decode::LSE.to_string(),
                    shape: lse.shape().to_vec(),
                    expected: format!("[{}, {}], a value per query row and head of `o`", shape[0], shape[1]),
                });
            }
            Some(super::f32s(lse.data()))
        }
    };
    Ok(PackedOutput { bits, dtype, shape, lse })
}
