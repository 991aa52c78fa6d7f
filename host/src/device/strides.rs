//! Row strides of E4M3 views whose rows interleave heads: a `[batch, seq,
//! heads, head_dim]` tensor read as `batch * seq` rows, or a packed batch's
//! `[rows, heads, head_dim]`. They let the kernels read a slice of a larger
//! tensor in place, e.g. Q, K and V of a fused `[batch, seq, 3, heads,
//! head_dim]` QKV projection, without a copy.

use crate::error::AttnError;
use kernels_gpu::params;

/// Where the rows of a view lie, in elements (E4M3 elements are bytes):
/// from one position (row) to the next, and from one head to the next
/// within a row; the last dimension is contiguous. In a `[batch, seq,
/// heads, head_dim]` view the batches follow each other: batch `b`'s
/// position `s` is row `b * seq + s` (true of any slice along the heads'
/// side of a fused tensor).
///
/// ```
/// use sdpa::device::RowStrides;
/// // Q of a fused [batch, seq, 3, 8, 64] QKV: 3 * 8 * 64 elements a row.
/// let q = RowStrides { row: 3 * 8 * 64, head: 64 };
/// assert_eq!(q.extent(2 * 128, 8, 64), Some((2 * 128 - 1) * 3 * 8 * 64 + 7 * 64 + 64));
/// assert!(RowStrides::dense(8, 64).is_dense(8, 64));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RowStrides {
    /// Elements from one row (position) to the next.
    pub row: usize,
    /// Elements from one head to the next within a row.
    pub head: usize,
}

/// What the kernels' copies need of each stride: 16-byte rows and heads.
pub const STRIDE_ALIGN: usize = 16;

impl RowStrides {
    /// Rows of `heads` heads of `head_dim` elements without gaps.
    pub const fn dense(heads: usize, head_dim: usize) -> RowStrides {
        RowStrides { row: heads * head_dim, head: head_dim }
    }

    /// Whether these are [`RowStrides::dense`]'s for `heads` and
    /// `head_dim`.
    pub fn is_dense(self, heads: usize, head_dim: usize) -> bool {
        self == RowStrides::dense(heads, head_dim)
    }

    /// The row strides of a tensor `[rows.., heads, head_dim]` (e.g.
    /// `[batch, seq, heads, head_dim]`, or a packed `[rows, heads,
    /// head_dim]`) with element strides `strides`, where the kernels can
    /// read it in place: the last dimension contiguous and the dimensions
    /// before the heads one row index (each the span of those inside it,
    /// e.g. batches `seq` rows apart). Dimensions of size one may have any
    /// stride. `None` where the tensor is not so (or has fewer than two
    /// dimensions); the views check the strides themselves (multiples of
    /// [`STRIDE_ALIGN`], 32 bits).
    ///
    /// ```
    /// use sdpa::device::RowStrides;
    /// // K of a fused [2, 100, 2, 8, 64] KV cache: rows 1024 apart.
    /// let k = RowStrides::flattened(&[2, 100, 8, 64], &[102400, 1024, 64, 1]);
    /// assert_eq!(k, Some(RowStrides { row: 1024, head: 64 }));
    /// // [B, H, S, D] memory seen as [B, S, H, D]: batches not S rows apart.
    /// assert_eq!(RowStrides::flattened(&[2, 100, 8, 64], &[51200, 64, 6400, 1]), None);
    /// ```
    pub fn flattened(shape: &[usize], strides: &[usize]) -> Option<RowStrides> {
        let n = shape.len();
        if n < 2 || strides.len() != n {
            return None;
        }
        let [heads, head_dim] = [shape[n - 2], shape[n - 1]];
        if head_dim > 1 && strides[n - 1] != 1 {
            return None;
        }
        let dense = RowStrides::dense(heads, head_dim);
        // The row dimensions of more than one index, innermost first.
        let mut rows = shape[..n - 2].iter().zip(&strides[..n - 2]).rev().filter(|(size, _)| **size > 1);
        let row = match rows.next() {
            Some((&size, &row)) => {
                let mut span = size.checked_mul(row)?;
                for (&size, &outer) in rows {
                    if outer != span {
                        return None;
                    }
                    span = span.checked_mul(size)?;
                }
                row
            }
            None => dense.row,
        };
        let head = if heads > 1 { strides[n - 2] } else { dense.head };
        Some(RowStrides { row, head })
    }

    /// Elements from a view's first element to one past its last, for
    /// `rows` rows of `heads` heads of `head_dim` (0 for an empty view);
    /// `None` where that overflows.
    pub fn extent(self, rows: usize, heads: usize, head_dim: usize) -> Option<usize> {
        if rows == 0 || heads == 0 || head_dim == 0 {
            return Some(0);
        }
        let last_row = (rows - 1).checked_mul(self.row)?;
        let last_head = (heads - 1).checked_mul(self.head)?;
        last_row.checked_add(last_head)?.checked_add(head_dim)
    }

    /// Refuses strides the kernels cannot read for `tensor`: zero, not a
    /// multiple of [`STRIDE_ALIGN`], or past what their 32-bit stride
    /// fields hold; else the elements the view spans
    /// ([`RowStrides::extent`]).
    pub(crate) fn check(self, tensor: &str, [rows, heads, head_dim]: [usize; 3]) -> Result<usize, AttnError> {
        let refuse = |reason: String| {
            Err(AttnError::InvalidStrides { tensor: tensor.into(), row: self.row, head: self.head, reason })
        };
        for (name, stride) in [("row", self.row), ("head", self.head)] {
            if stride == 0 || stride % STRIDE_ALIGN != 0 {
                return refuse(format!("the {name} stride must be a positive multiple of {STRIDE_ALIGN} elements"));
            }
            if u32::try_from(stride).is_err() {
                return refuse(format!("the {name} stride is past {}", u32::MAX));
            }
        }
        // (The kernels add a head's offset within a row in 32 bits.)
        let row_span = (heads.max(1) - 1).checked_mul(self.head).and_then(|h| h.checked_add(head_dim));
        if row_span.is_none_or(|span| u32::try_from(span).is_err()) {
            return refuse(format!("{heads} heads {} elements apart span more than {} elements", self.head, u32::MAX));
        }
        match self.extent(rows, heads, head_dim) {
            Some(extent) => Ok(extent),
            None => refuse(format!("{rows} rows of {heads} heads overflow the address space")),
        }
    }

    /// As the kernels take them (checked by [`RowStrides::check`]).
    pub(crate) fn to_params(self) -> params::RowStrides {
        params::RowStrides { row: self.row as u32, head: self.head as u32 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Where `flattened` finds row strides, every element of the tensor
        /// sits where its own strides put it: row `r` (the row dimensions'
        /// indices in row-major order), head `h`, column `x` at `r * row +
        /// h * head + x`.
        #[test]
        fn flattened_rows_address_every_element_where_its_strides_do(
            rows in prop::collection::vec(1usize..4, 1..4),
            (heads, head_dim) in (1usize..4, 1usize..5),
            gaps in prop::collection::vec(0usize..3, 5),
            flatten in any::<bool>(),
        ) {
            // Strides from the inside out: the head dimension contiguous,
            // each outer one at least its inner span (plus a gap), and the
            // row dimensions' either exact spans of each other or not.
            let mut shape = rows.clone();
            shape.extend([heads, head_dim]);
            let n = shape.len();
            let mut strides = vec![0usize; n];
            strides[n - 1] = 1;
            strides[n - 2] = head_dim + gaps[0];
            let mut span = heads * strides[n - 2] + gaps[1];
            for i in (0..n - 2).rev() {
                strides[i] = span;
                span = shape[i] * strides[i] + if flatten { 0 } else { gaps[2 + i % 3] };
            }
            if let Some(s) = RowStrides::flattened(&shape, &strides) {
                let total_rows: usize = rows.iter().product();
                for r in 0..total_rows {
                    // `r`'s index in each row dimension.
                    let mut rest = r;
                    let mut at = 0;
                    for i in (0..n - 2).rev() {
                        at += (rest % shape[i]) * strides[i];
                        rest /= shape[i];
                    }
                    for h in 0..heads {
                        prop_assert_eq!(r * s.row + h * s.head, at + h * strides[n - 2]);
                    }
                }
            } else {
                prop_assert!(!flatten, "exact spans flatten: {:?} {:?}", shape, strides);
            }
        }
    }

    #[test]
    fn the_extent_reaches_the_last_head_of_the_last_row() {
        let s = RowStrides { row: 3 * 4 * 64, head: 64 };
        assert_eq!(s.extent(10, 4, 64), Some(9 * 768 + 3 * 64 + 64));
        assert_eq!(RowStrides::dense(4, 64).extent(10, 4, 64), Some(10 * 4 * 64));
        assert_eq!(s.extent(0, 4, 64), Some(0));
        assert_eq!(RowStrides { row: usize::MAX, head: 16 }.extent(3, 1, 16), None);
    }

    #[test]
    fn strides_the_copies_cannot_take_are_refused() {
        let shape = [8, 2, 64];
        for bad in [
            RowStrides { row: 0, head: 64 },
            RowStrides { row: 136, head: 64 },
            RowStrides { row: 256, head: 8 },
            RowStrides { row: 1 << 32, head: 64 },
        ] {
            let err = bad.check("q", shape).unwrap_err();
            assert!(matches!(err, AttnError::InvalidStrides { .. }), "{bad:?}: {err}");
        }
        // Three heads 2^31 elements apart: a row spans more than 32 bits.
        let wide = RowStrides { row: 1 << 31, head: 1 << 31 };
        assert!(wide.check("q", [8, 2, 64]).is_ok());
        assert!(matches!(wide.check("q", [8, 3, 64]), Err(AttnError::InvalidStrides { .. })));
        assert_eq!(RowStrides { row: 384, head: 64 }.check("q", shape).unwrap(), 7 * 384 + 64 + 64);
    }
}
