//! A packed batch of sequences of their own lengths (FlashAttention's
//! variable-length layout, `flash_attn_varlen_func`): Q and O `[total_q,
//! heads_q, head_dim]`, K and V `[total_k, heads_kv, head_dim]`, sequence
//! `b`'s rows `cu_seqlens[b] .. cu_seqlens[b + 1]` of each. Run by the
//! `wgmma` variants' packed twins ([`crate::Attention::run_packed`]).

use super::{Memory, check_device};
use crate::error::AttnError;
use cudarc::driver::CudaView;

/// The prefix sums of the sequences' lengths and the longest lengths,
/// borrowed.
pub struct PackedSeqs<'a> {
    pub(crate) cu_seqlens_q: Memory<'a, i32>,
    pub(crate) cu_seqlens_k: Memory<'a, i32>,
    max_seqlen: [usize; 2],
}

impl<'a> PackedSeqs<'a> {
    /// `batch + 1` int32 prefix sums of the query and the key lengths on
    /// the device (from 0, non-decreasing; sequence `b` has queries
    /// `cu_seqlens_q[b] .. cu_seqlens_q[b + 1]`), and the longest query
    /// and key lengths. The values are read on the device only: there a
    /// first row past the total starts at it, a decreasing pair is an
    /// empty sequence and a sequence longer than its longest length is cut
    /// at it, so that no value reads past a tensor.
    pub fn new(
        cu_seqlens_q: CudaView<'a, i32>,
        cu_seqlens_k: CudaView<'a, i32>,
        max_seqlen_q: usize,
        max_seqlen_k: usize,
    ) -> Result<PackedSeqs<'a>, AttnError> {
        PackedSeqs::checked(Memory::View(cu_seqlens_q), Memory::View(cu_seqlens_k), [max_seqlen_q, max_seqlen_k])
    }

    /// The prefix sums in `cu_seqlens_q` and `cu_seqlens_k` (of equal
    /// lengths, at least 2: refused otherwise) and the longest `[queries,
    /// keys]` lengths.
    pub(crate) fn checked(
        cu_seqlens_q: Memory<'a, i32>,
        cu_seqlens_k: Memory<'a, i32>,
        max_seqlen: [usize; 2],
    ) -> Result<PackedSeqs<'a>, AttnError> {
        if cu_seqlens_q.len() != cu_seqlens_k.len() {
            return Err(AttnError::ShapeMismatch(format!(
                "cu_seqlens_q has {} entries but cu_seqlens_k {}",
                cu_seqlens_q.len(),
                cu_seqlens_k.len()
            )));
        }
        if cu_seqlens_q.len() < 2 {
            return Err(AttnError::ShapeMismatch(format!(
                "cu_seqlens_q has {} entries: a batch of B sequences has B + 1",
                cu_seqlens_q.len()
            )));
        }
        Ok(PackedSeqs { cu_seqlens_q, cu_seqlens_k, max_seqlen })
    }

    /// Sequences in the batch.
    pub fn batch(&self) -> usize {
        self.cu_seqlens_q.len() - 1
    }

    /// The longest query and key lengths, `[queries, keys]`.
    pub fn max_seqlen(&self) -> [usize; 2] {
        self.max_seqlen
    }

    /// Refuses prefix sums on another device than `ordinal`.
    pub(crate) fn check_devices(&self, ordinal: usize) -> Result<(), AttnError> {
        check_device("cu_seqlens_q", self.cu_seqlens_q.ordinal(), ordinal)?;
        check_device("cu_seqlens_k", self.cu_seqlens_k.ordinal(), ordinal)
    }
}
