//! A paged E4M3 KV cache (FlashAttention's `page_table` layout): K and V
//! are pools of pages `[pages, page_size, heads_kv, head_dim]`, and batch
//! `b`'s keys `page_size * i ..` live in page `table[b][i]`. `decode` runs
//! on one ([`crate::Attention::run_paged`]), at any query length (decoding,
//! or a prefill chunk over a cached prefix); plan it with
//! [`crate::Attention::plan_paged`], which plans the cache as if it were
//! contiguous ([`PagedKv::kv_shape`]).

use super::{Fp8View, Memory, check_device};
use crate::error::AttnError;
use cudarc::driver::CudaView;

/// The fewest keys a page holds: `decode`'s key block, which must never
/// straddle two pages.
pub const MIN_PAGE_SIZE: usize = 32;

/// The most keys a page holds.
pub const MAX_PAGE_SIZE: usize = 1 << 16;

/// K and V pages and the page table, borrowed.
pub struct PagedKv<'a> {
    pub(crate) k: Fp8View<'a>,
    pub(crate) v: Fp8View<'a>,
    pub(crate) table: Memory<'a, i32>,
    batch: usize,
    max_pages: usize,
}

impl<'a> PagedKv<'a> {
    /// K and V pools (views of `[pages, page_size, heads_kv, head_dim]`
    /// E4M3 codes, the same shape) and the page table (int32 `[batch,
    /// max_pages]`, `table_shape`). The page size must be a power of two
    /// from [`MIN_PAGE_SIZE`] to [`MAX_PAGE_SIZE`]. A table entry outside
    /// `0 .. pages` is clamped into it on the device, never read past.
    pub fn new(
        k: Fp8View<'a>,
        v: Fp8View<'a>,
        table: CudaView<'a, i32>,
        table_shape: [usize; 2],
    ) -> Result<PagedKv<'a>, AttnError> {
        PagedKv::checked(k, v, Memory::View(table), table_shape)
    }

    /// [`PagedKv::new`] on a table in any memory.
    pub(crate) fn checked(
        k: Fp8View<'a>,
        v: Fp8View<'a>,
        table: Memory<'a, i32>,
        table_shape: [usize; 2],
    ) -> Result<PagedKv<'a>, AttnError> {
        let [pages, page_size, _, _] = k.shape();
        if v.shape() != k.shape() {
            return Err(AttnError::ShapeMismatch(format!("k pages are {:?} but v pages {:?}", k.shape(), v.shape())));
        }
        if !page_size.is_power_of_two() || !(MIN_PAGE_SIZE..=MAX_PAGE_SIZE).contains(&page_size) {
            return Err(AttnError::ShapeMismatch(format!(
                "page size {page_size}: a power of two from {MIN_PAGE_SIZE} to {MAX_PAGE_SIZE} keys"
            )));
        }
        let [batch, max_pages] = table_shape;
        if pages == 0 || batch == 0 || max_pages == 0 {
            return Err(AttnError::ShapeMismatch(format!(
                "{pages} pages and a page table of {batch} x {max_pages}: none may be empty"
            )));
        }
        if table.len() != batch * max_pages {
            return Err(AttnError::BufferLength {
                tensor: "page_table".into(),
                expected: batch * max_pages,
                actual: table.len(),
            });
        }
        if pages.checked_mul(page_size).is_none_or(|rows| rows >= 1 << 31) {
            return Err(AttnError::ShapeMismatch(format!("{pages} pages of {page_size} keys: 2^31 rows or more")));
        }
        Ok(PagedKv { k, v, table, batch, max_pages })
    }

    /// The shape to plan with: `[batch, heads_kv, max_pages * page_size,
    /// head_dim]` (each batch's keys as if contiguous).
    pub fn kv_shape(&self) -> [usize; 4] {
        let [_, page_size, heads_kv, head_dim] = self.k.shape();
        [self.batch, heads_kv, self.max_pages * page_size, head_dim]
    }

    /// Pages in each pool.
    pub fn pages(&self) -> usize {
        self.k.shape()[0]
    }

    /// Keys per page.
    pub fn page_size(&self) -> usize {
        self.k.shape()[1]
    }

    /// Entries per batch of the page table.
    pub fn max_pages(&self) -> usize {
        self.max_pages
    }

    /// Refuses pools or a table on another device than `ordinal`.
    pub(crate) fn check_devices(&self, ordinal: usize) -> Result<(), AttnError> {
        check_device("k", self.k.ordinal(), ordinal)?;
        check_device("v", self.v.ordinal(), ordinal)?;
        check_device("page_table", self.table.ordinal(), ordinal)
    }
}
