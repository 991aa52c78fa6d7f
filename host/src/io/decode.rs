//! The decode tensors a file may hold beside q, k, v and o: each
//! sequence's cache length `seqused_k` and a page table `page_table` (with
//! which `k` and `v` are pools of pages) in an input file, the log-sum-exp
//! `lse` in an output file. The `decode` variant reads and writes them
//! ([`crate::Attention::run_views_with`], [`crate::Attention::run_paged`]).
//!
//! They are checked as strictly as q, k and v: dtype, shape against the
//! batch of `q` and the pools, and every value the kernels would read
//! within its range (the kernels clamp lengths and page indices, which
//! would hide a mistake in the file).

use std::path::Path;

use safetensors::{Dtype, SafeTensors};

use super::{InputTensor, IoError, load_scales, tensor};
use crate::device::{MAX_PAGE_SIZE, MIN_PAGE_SIZE};
use crate::error::AttnError;
use crate::quant;
use crate::tensor::{Fp8Input, Fp8Tensor};

/// The name of the cache lengths in an input file.
pub const SEQ_USED_K: &str = "seqused_k";

/// The name of the page table in an input file.
pub const PAGE_TABLE: &str = "page_table";

/// The name of the log-sum-exp in an output file.
pub const LSE: &str = "lse";

/// The decode inputs of a file beyond q, k and v; none by default.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DecodeInputs {
    /// `seqused_k`: batch `b` sees the first `lens[b]` keys of its cache
    /// (int32 `[B]`, each `0 ..= Skv`).
    pub seq_used_k: Option<Vec<i32>>,
    /// `page_table`: K and V are pools of pages.
    pub page_table: Option<PageTable>,
}

impl DecodeInputs {
    /// Whether the file holds neither tensor.
    pub fn is_empty(&self) -> bool {
        self.seq_used_k.is_none() && self.page_table.is_none()
    }
}

/// A page table (int32 `[batch, max_pages]`, row-major): batch `b`'s keys
/// `page_size * i ..` live in pool page `entries[b * max_pages + i]` of K
/// and V, pools `[pages, page_size, heads_kv, head_dim]`.
#[derive(Clone, Debug, PartialEq)]
pub struct PageTable {
    /// The pool page of each (batch, page), row-major.
    pub entries: Vec<i32>,
    /// Batches (rows).
    pub batch: usize,
    /// Pages per batch (columns).
    pub max_pages: usize,
}

/// Each query row's log-sum-exp, as an output file holds it: f32 `[batch,
/// heads_q, seq_q]`, `-inf` for a row that sees no key.
#[derive(Clone, Debug, PartialEq)]
pub struct Lse {
    /// The values, row-major.
    pub values: Vec<f32>,
    /// `[batch, heads_q, seq_q]`.
    pub shape: [usize; 3],
}

/// Reads K or V as a pool of pages `[pages, page_size, heads_kv,
/// head_dim]` of E4M3 codes with one scale per key/value head (its
/// `*_scale`, or 1.0): a paged cache is read as codes, never quantized
/// here (a float pool's heads are not its second dimension).
pub(super) fn read_pool(path: &Path, st: &SafeTensors, name: &'static str) -> Result<Fp8Tensor, IoError> {
    let view = tensor(path, st, name)?;
    let wrong_shape = || IoError::WrongShape {
        path: path.to_path_buf(),
        name: name.to_string(),
        shape: view.shape().to_vec(),
        expected: format!(
            "rank 4 [pages, page_size, heads_kv, head_dim] (a pool of pages, as `{PAGE_TABLE}` is given)"
        ),
    };
    let shape: [usize; 4] = view.shape().try_into().map_err(|_| wrong_shape())?;
    if shape.contains(&0) {
        let source = AttnError::ZeroDimension { tensor: name, shape };
        return Err(IoError::Attn { path: path.to_path_buf(), source });
    }
    if view.dtype() != Dtype::F8_E4M3 {
        return Err(IoError::UnsupportedDtype {
            path: path.to_path_buf(),
            name: name.to_string(),
            dtype: view.dtype().to_string(),
            expected: "F8_E4M3 (the pages of a paged cache are E4M3 codes)",
        });
    }
    let [pages, page_size, heads_kv, _] = shape;
    if !page_size.is_power_of_two() || !(MIN_PAGE_SIZE..=MAX_PAGE_SIZE).contains(&page_size) {
        return Err(IoError::PageSize { path: path.to_path_buf(), name: name.to_string(), page_size });
    }
    if pages.checked_mul(page_size).is_none_or(|rows| rows >= 1 << 31) {
        let source = AttnError::TooLarge(format!("{name}: {pages} pages of {page_size} keys are 2^31 rows or more"));
        return Err(IoError::Attn { path: path.to_path_buf(), source });
    }
    let scales = load_scales(path, st, name, heads_kv)?;
    Ok(quant::from_codes(view.data().to_vec(), shape, scales))
}

/// Reads the page table for `batch` sequences (int32 `[batch, max_pages]`)
/// if the file has one; its entries are checked by [`check_pages`].
pub(super) fn read_page_table(path: &Path, st: &SafeTensors, batch: usize) -> Result<Option<PageTable>, IoError> {
    let expected = format!("[{batch}, max_pages]: the batch of `q`, then one or more pages");
    let fits = |shape: &[usize]| matches!(shape, &[b, max_pages] if b == batch && max_pages > 0);
    let Some(entries) = read_i32s(path, st, PAGE_TABLE, &expected, fits)? else { return Ok(None) };
    let max_pages = entries.len() / batch;
    Ok(Some(PageTable { entries, batch, max_pages }))
}

/// Reads `seqused_k` for `batch` sequences of up to `seq_kv` keys (int32
/// `[batch]`, each `0 ..= seq_kv`) if the file has it.
pub(super) fn read_seq_used_k(
    path: &Path,
    st: &SafeTensors,
    batch: usize,
    seq_kv: usize,
) -> Result<Option<Vec<i32>>, IoError> {
    let expected = format!("[{batch}]: the batch of `q`");
    let Some(lens) = read_i32s(path, st, SEQ_USED_K, &expected, |shape| shape == [batch])? else { return Ok(None) };
    for (b, &len) in lens.iter().enumerate() {
        if !usize::try_from(len).is_ok_and(|n| n <= seq_kv) {
            return Err(IoError::OutOfRange {
                path: path.to_path_buf(),
                name: SEQ_USED_K,
                at: format!("{b}"),
                value: len,
                range: format!("0 ..= {seq_kv} (the keys of each sequence's cache)"),
            });
        }
    }
    Ok(Some(lens))
}

/// Checks that every page a sequence reads (its first `ceil(len /
/// page_size)` entries, `len` its `seqused_k` or else all its keys) is a
/// page of the pools: `0 .. pages`. Entries past a sequence's length are
/// never read and may hold anything (e.g. -1 as padding).
pub(super) fn check_pages(
    path: &Path,
    table: &PageTable,
    pages: usize,
    page_size: usize,
    seq_used_k: Option<&[i32]>,
) -> Result<(), IoError> {
    for (b, row) in table.entries.chunks_exact(table.max_pages).enumerate() {
        // (Lengths were checked to lie in 0 ..= max_pages * page_size.)
        let used = seq_used_k.map_or(table.max_pages, |lens| (lens[b] as usize).div_ceil(page_size));
        for (i, &page) in row.iter().enumerate().take(used) {
            if !usize::try_from(page).is_ok_and(|p| p < pages) {
                return Err(IoError::OutOfRange {
                    path: path.to_path_buf(),
                    name: PAGE_TABLE,
                    at: format!("{b}, {i}"),
                    value: page,
                    range: format!(
                        "0 .. {pages} (the pages of `k` and `v`; entries past a sequence's length are not read)"
                    ),
                });
            }
        }
    }
    Ok(())
}

/// The int32 tensor `name` if the file has it, of a shape `fits` accepts
/// (`expected` describes it).
pub(super) fn read_i32s(
    path: &Path,
    st: &SafeTensors,
    name: &'static str,
    expected: &str,
    fits: impl Fn(&[usize]) -> bool,
) -> Result<Option<Vec<i32>>, IoError> {
    let Ok(view) = st.tensor(name) else { return Ok(None) };
    if view.dtype() != Dtype::I32 {
        return Err(IoError::UnsupportedDtype {
            path: path.to_path_buf(),
            name: name.to_string(),
            dtype: view.dtype().to_string(),
            expected: "I32",
        });
    }
    if !fits(view.shape()) {
        return Err(IoError::WrongShape {
            path: path.to_path_buf(),
            name: name.to_string(),
            shape: view.shape().to_vec(),
            expected: expected.to_string(),
        });
    }
    Ok(Some(view.data().as_chunks::<4>().0.iter().map(|&c| i32::from_le_bytes(c)).collect()))
}

/// An input tensor as the plan sees it ([`Fp8Input`]): a page pool as the
/// contiguous cache `[B, Hkv, max_pages * page_size, D]` it stands for
/// ([`crate::PagedKv::kv_shape`]), a packed batch's tensor as `[B, H,
/// longest, D]`, any other tensor as it is.
#[derive(Debug)]
pub struct Planned<'a> {
    tensor: &'a InputTensor,
    shape: [usize; 4],
    /// The codes a buffer of `shape` holds: the tensor's own count, or for a
    /// pool (whose length its reading checked) the planned shape's.
    codes: usize,
}

impl<'a> Planned<'a> {
    /// `tensor` as it is.
    pub(super) fn contiguous(tensor: &'a InputTensor) -> Self {
        Planned { tensor, shape: tensor.shape(), codes: tensor.code_count() }
    }

    /// The pool `tensor` (`[pages, page_size, Hkv, D]`) read through
    /// `table`.
    pub(super) fn paged(tensor: &'a InputTensor, table: &PageTable) -> Self {
        let [_, page_size, heads_kv, head_dim] = tensor.shape();
        Planned::with_shape(tensor, [table.batch, heads_kv, table.max_pages * page_size, head_dim])
    }

    /// `tensor` (whose length its reading checked) as the plan's `shape`:
    /// a pool as its cache, a packed batch as its longest sequence's grid.
    pub(super) fn with_shape(tensor: &'a InputTensor, shape: [usize; 4]) -> Self {
        // (A product past usize is refused by validation, from the shape.)
        let codes = shape.iter().try_fold(1usize, |n, &d| n.checked_mul(d)).unwrap_or(usize::MAX);
        Planned { tensor, shape, codes }
    }
}

impl Fp8Input for Planned<'_> {
    fn shape(&self) -> [usize; 4] {
        self.shape
    }
    fn code_count(&self) -> usize {
        self.codes
    }
    fn scales(&self) -> &[f32] {
        self.tensor.scales()
    }
}
