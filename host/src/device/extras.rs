//! What a run may read and write beyond Q, K, V and O
//! ([`crate::Attention::run_views_with`], `run_paged`, `run_packed`): each
//! batch's key length (FlashAttention's `cache_seqlens`: a cache allocated
//! for `seq_kv` keys of which batch `b` holds its first `lens[b]`), which
//! only `decode` takes, and every query row's log-sum-exp, which every
//! variant writes.

use super::{Memory, MemoryMut, check_device};
use crate::error::AttnError;
use crate::plan::Plan;
use cudarc::driver::{CudaView, CudaViewMut};

/// The optional inputs and outputs of a run; empty by default.
#[derive(Default)]
pub struct RunExtras<'a> {
    pub(crate) seq_used_k: Option<Memory<'a, i32>>,
    pub(crate) lse: Option<MemoryMut<'a, f32>>,
}

impl<'a> RunExtras<'a> {
    /// Neither input nor output.
    pub fn new() -> Self {
        RunExtras::default()
    }

    /// Batch `b` sees only its first `lens[b]` keys (int32 `[batch]` on
    /// the device; values outside `0 ..= seq_kv` are clamped there, never
    /// read past), causal masking aligned to that length.
    pub fn seq_used_k(self, lens: CudaView<'a, i32>) -> Self {
        RunExtras { seq_used_k: Some(Memory::View(lens)), ..self }
    }

    /// Writes each query row's log-sum-exp into `lse` (f32 `[batch,
    /// heads_q, seq_q]`; `[batch, seq_q, heads_q]` for `[B, S, H, D]`
    /// tensors and `[total_q, heads_q]` for a packed batch, the output's
    /// rows in its order): the natural log of the sum over the keys the row
    /// sees of `exp(softmax_scale * q.k)` on the dequantized inputs; `-inf`
    /// for a row that sees no key. Two partial results over disjoint keys
    /// merge as `o = (o1 e^lse1 + o2 e^lse2) / (e^lse1 + e^lse2)`.
    pub fn lse(self, lse: CudaViewMut<'a, f32>) -> Self {
        RunExtras { lse: Some(MemoryMut::View(lse)), ..self }
    }

    /// Whether it asks for nothing.
    pub fn is_empty(&self) -> bool {
        self.seq_used_k.is_none() && self.lse.is_none()
    }

    /// Refuses extras that `plan`'s kernel does not take, or of the wrong
    /// length or device.
    pub(crate) fn check(&self, plan: &Plan, ordinal: usize) -> Result<(), AttnError> {
        let (p, kernel) = (plan.problem(), plan.kernel());
        if let Some(lens) = &self.seq_used_k {
            if kernel.merge.is_none() {
                return Err(AttnError::VariantUnavailable {
                    variant: kernel.variant.name(),
                    reason: "per-batch key lengths are the `decode` variant's".into(),
                });
            }
            check_len("seq_used_k", lens.len(), p.batch)?;
            check_device("seq_used_k", lens.ordinal(), ordinal)?;
        }
        if let Some(lse) = &self.lse {
            let rows = p.packed.map_or(p.batch * p.seq_q, |rows| rows.total_q);
            check_len("lse", lse.len(), rows * p.heads_q)?;
            check_device("lse", lse.ordinal(), ordinal)?;
        }
        Ok(())
    }
}

/// Refuses a buffer of `len` elements where `expected` are needed.
fn check_len(tensor: &str, len: usize, expected: usize) -> Result<(), AttnError> {
    if len == expected {
        Ok(())
    } else {
        Err(AttnError::BufferLength { tensor: tensor.to_string(), expected, actual: len })
    }
}
