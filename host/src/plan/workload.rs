//! The size of an attention problem as the recommendation and the cost
//! model see it.

use crate::validate::Problem;
use kernels_gpu::kernels::{SPLIT_WG_D64, WGMMA_D64, find};
use kernels_gpu::variant::Variant;

/// The size of an attention problem, as [`super::recommend::recommended`]
/// sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Workload {
    /// Batch size B.
    pub batch: u32,
    /// Query heads Hq.
    pub heads_q: u32,
    /// Query length Sq.
    pub seq_q: u32,
    /// Key length Skv.
    pub seq_kv: u32,
    /// Head dimension D.
    pub head_dim: u32,
    /// Causal masking.
    pub causal: bool,
}

impl Workload {
    /// The problem of Q of shape `q_shape` and K/V of shape `kv_shape`
    /// (`[B, H, S, D]`), causal or not; a size past `u32` saturates (the
    /// validation refuses such problems).
    pub fn new(q_shape: [usize; 4], kv_shape: [usize; 4], causal: bool) -> Self {
        let dim = |x: usize| u32::try_from(x).unwrap_or(u32::MAX);
        Workload {
            batch: dim(q_shape[0]),
            heads_q: dim(q_shape[1]),
            seq_q: dim(q_shape[2]),
            seq_kv: dim(kv_shape[2]),
            head_dim: dim(q_shape[3]),
            causal,
        }
    }

    /// The size of a validated problem.
    pub fn of(p: &Problem) -> Self {
        Workload::new(p.q_shape(), p.kv_shape(), p.causal)
    }

    /// The blocks of `rows` query rows over batch and heads, halved (rounded
    /// up) under causal masking, whose blocks see half the keys on average.
    pub fn blocks(&self, rows: u32) -> u64 {
        let blocks = self.batch as u64 * self.heads_q as u64 * self.seq_q.div_ceil(rows) as u64;
        if self.causal { blocks.div_ceil(2) } else { blocks }
    }

    /// The query blocks `wgmma` would launch ([`Workload::blocks`] of its
    /// tile's rows: 128 at D = 64, 192 at D = 128; 128 for a head dimension
    /// without a kernel): how well the long-sequence kernel would fill the
    /// GPU.
    pub fn wgmma_blocks(&self) -> u64 {
        self.blocks(find(Variant::Wgmma, self.head_dim).map_or(WGMMA_D64.block_m, |k| k.tiles.block_m))
    }

    /// The blocks `split-wg` would launch ([`Workload::blocks`] of 64 rows).
    pub fn split_wg_blocks(&self) -> u64 {
        self.blocks(find(Variant::SplitWg, self.head_dim).map_or(SPLIT_WG_D64.block_m, |k| k.tiles.block_m))
    }

    /// The keys a query block sees on average, as the recommendation weighs
    /// a block's chain: `seq_kv`, halved (rounded up) under causal masking.
    pub fn split_keys(&self) -> u32 {
        if self.causal { self.seq_kv.div_ceil(2) } else { self.seq_kv }
    }
}
