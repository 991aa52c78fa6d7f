//! The arguments of one call on a KV cache (FlashAttention's
//! `flash_attn_with_kvcache`), read from their DLPack descriptions and
//! checked before any GPU work, in the order `args` checks a dense call's.
//! Q, the output and the log-sum-exp come in `[B, Hq, Sq, D]` order (the
//! Python layer hands over `[B, Sq, Hq, D]` ones transposed, a view at
//! `Sq = 1`); the cache is `[B, Skv, Hkv, D]` (rows may be strided, one
//! query row per sequence) or, with a page table, pools `[pages,
//! page_size, Hkv, D]`.

use crate::args::{
    ArgError, DESCALE_NAMES, E4M3, Element, Operand, descale_operands, e4m3_rows, on_one_device, operand, outputs,
};
use crate::dlpack::TensorInfo;
use sdpa::OutputDtype;
use sdpa::device::RowStrides;

/// Where a call's keys and values live.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cache {
    /// `[B, Skv, Hkv, D]` each, rows `strides` apart where not dense.
    Contiguous { strides: Option<RowStrides> },
    /// Pools `[pages, page_size, Hkv, D]` and the int32 page table `[B,
    /// max_pages]`.
    Paged { page_table: Operand<2> },
}

/// A KV-cache call's checked arguments.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KvCacheCall {
    /// The CUDA device.
    pub ordinal: usize,
    /// Q `[B, Hq, Sq, D]`.
    pub q: Operand<4>,
    /// K as given: `[B, Skv, Hkv, D]`, or the pool `[pages, page_size,
    /// Hkv, D]`.
    pub k: Operand<4>,
    /// V, as K.
    pub v: Operand<4>,
    /// How K and V lie.
    pub cache: Cache,
    /// Each sequence's key count (int32 `[B]`), where given.
    pub cache_seqlens: Option<Operand<1>>,
    /// Q's, K's and V's descales `(B, Hkv)`.
    pub descales: [Operand<2>; 3],
    /// The output `[B, Hq, Sq, D]`.
    pub out: Operand<4>,
    /// The output's element type.
    pub out_dtype: OutputDtype,
    /// The log-sum-exp `[B, Hq, Sq]`, where asked for.
    pub lse: Option<Operand<3>>,
}

impl KvCacheCall {
    /// The cache's shape as `[B, Hkv, Skv, D]` (a paged cache's `Skv` is
    /// `max_pages * page_size`), what the plan is made for.
    pub fn kv_shape(&self) -> [usize; 4] {
        let [b, _, _, d] = self.q.shape;
        // `[B, Skv, Hkv, D]`, or `[pages, page_size, Hkv, D]`.
        let [_, rows, hkv, _] = self.k.shape;
        match self.cache {
            Cache::Contiguous { .. } => [b, hkv, rows, d],
            Cache::Paged { page_table } => [b, hkv, page_table.shape[1] * rows, d],
        }
    }
}

/// The tensors of one KV-cache call, as their capsules described them.
pub struct KvCacheTensors {
    /// Q.
    pub q: TensorInfo,
    /// K's cache.
    pub k: TensorInfo,
    /// V's cache.
    pub v: TensorInfo,
    /// The sequences' key counts.
    pub cache_seqlens: Option<TensorInfo>,
    /// The page table.
    pub page_table: Option<TensorInfo>,
    /// Q's, K's and V's descales.
    pub descales: [TensorInfo; 3],
    /// The output.
    pub out: TensorInfo,
    /// The log-sum-exp output, where asked for.
    pub lse: Option<TensorInfo>,
}

impl KvCacheTensors {
    /// Checks the tensors: types and layouts, then how their shapes fit
    /// together, then their devices.
    pub fn check(&self) -> Result<KvCacheCall, ArgError> {
        let q = operand::<4>(&self.q, "q", &[Element::E4m3], E4M3)?;
        let page_table = match &self.page_table {
            Some(info) => Some(operand::<2>(info, "page_table", &[Element::I32], "int32")?),
            None => None,
        };
        let (k, v, cache) = match page_table {
            Some(page_table) => (
                operand::<4>(&self.k, "k_cache", &[Element::E4m3], E4M3)?,
                operand::<4>(&self.v, "v_cache", &[Element::E4m3], E4M3)?,
                Cache::Paged { page_table },
            ),
            None => {
                let (k, k_strides) = e4m3_rows::<4>(&self.k, "k_cache")?;
                let (v, v_strides) = e4m3_rows::<4>(&self.v, "v_cache")?;
                if k_strides != v_strides {
                    return Err(ArgError::Shape("k_cache and v_cache must have the same strides".into()));
                }
                (k, v, Cache::Contiguous { strides: k_strides })
            }
        };
        let cache_seqlens = match &self.cache_seqlens {
            Some(info) => Some(operand::<1>(info, "cache_seqlens", &[Element::I32], "int32")?),
            None => None,
        };
        let descales = descale_operands(&self.descales)?;
        let (out, out_dtype, lse) = outputs::<4, 3>(&self.out, self.lse.as_ref())?;
        let call = KvCacheCall { ordinal: 0, q, k, v, cache, cache_seqlens, descales, out, out_dtype, lse };
        check_shapes(&call)?;
        let named = [("q", &self.q), ("k_cache", &self.k), ("v_cache", &self.v), ("out", &self.out)]
            .into_iter()
            .chain(self.page_table.iter().map(|info| ("page_table", info)))
            .chain(self.cache_seqlens.iter().map(|info| ("cache_seqlens", info)))
            .chain(DESCALE_NAMES.into_iter().zip(&self.descales))
            .chain(self.lse.iter().map(|info| ("lse", info)));
        Ok(KvCacheCall { ordinal: on_one_device(named)?, ..call })
    }
}

/// Q `[B, Hq, Sq, D]`; K and V equal, `[B, Skv, Hkv, D]` with one query
/// row, or pools with a table of `B` rows; the output Q's shape, the
/// log-sum-exp `[B, Hq, Sq]`, the key counts `[B]`, the descales `(B,
/// Hkv)`.
fn check_shapes(call: &KvCacheCall) -> Result<(), ArgError> {
    let [b, hq, sq, d] = call.q.shape;
    let k = call.k.shape;
    if k != call.v.shape {
        return Err(ArgError::Shape(format!(
            "k_cache and v_cache must have the same shape, got {k:?} and {:?}",
            call.v.shape
        )));
    }
    if k[3] != d {
        return Err(ArgError::Shape(format!("q and k_cache must agree on head_dim, got {d} and {}", k[3])));
    }
    match call.cache {
        Cache::Contiguous { .. } => {
            if k[0] != b {
                return Err(ArgError::Shape(format!("k_cache must have q's batch {b}, got shape {k:?}")));
            }
            if sq != 1 {
                return Err(ArgError::Shape(format!(
                    "a cache without a page table takes one query row per sequence, got {sq}"
                )));
            }
        }
        Cache::Paged { page_table } => {
            if page_table.shape[0] != b {
                return Err(ArgError::Shape(format!(
                    "page_table must have shape (batch, max_pages) with batch {b}, got {:?}",
                    page_table.shape
                )));
            }
        }
    }
    if call.out.shape != call.q.shape {
        return Err(ArgError::Shape(format!("out must have q's shape {:?}, got {:?}", call.q.shape, call.out.shape)));
    }
    if let Some(lse) = call.lse
        && lse.shape != [b, hq, sq]
    {
        return Err(ArgError::Shape(format!("lse must have shape {:?}, got {:?}", [b, hq, sq], lse.shape)));
    }
    if let Some(lens) = call.cache_seqlens
        && lens.shape != [b]
    {
        return Err(ArgError::Shape(format!("cache_seqlens must have shape (batch,) = ({b},), got {:?}", lens.shape)));
    }
    let expected = [b, k[2]];
    for (name, descale) in DESCALE_NAMES.iter().zip(&call.descales) {
        if descale.shape != expected {
            return Err(ArgError::Shape(format!(
                "{name} must have shape (batch, num_heads_k) = {expected:?}, got {:?}",
                descale.shape
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dlpack::{CODE_FLOAT, CODE_INT, CODE_UINT};

    use crate::dlpack::cuda_tensor as tensor;

    fn call(q: &[i64], cache: &[i64], page_table: Option<&[i64]>) -> KvCacheTensors {
        let f32s = || tensor(&[q[0], cache[2]], CODE_FLOAT, 32);
        KvCacheTensors {
            q: tensor(q, CODE_UINT, 8),
            k: tensor(cache, CODE_UINT, 8),
            v: tensor(cache, CODE_UINT, 8),
            cache_seqlens: Some(tensor(&[q[0]], CODE_INT, 32)),
            page_table: page_table.map(|shape| tensor(shape, CODE_INT, 32)),
            descales: [f32s(), f32s(), f32s()],
            out: tensor(q, CODE_FLOAT, 16),
            lse: Some(tensor(&q[..3], CODE_FLOAT, 32)),
        }
    }

    #[test]
    fn contiguous_and_paged_caches_are_planned_as_their_keys() {
        let contiguous = call(&[2, 8, 1, 64], &[2, 300, 2, 64], None).check().unwrap();
        assert_eq!(contiguous.kv_shape(), [2, 2, 300, 64]);
        assert_eq!(contiguous.cache, Cache::Contiguous { strides: None });
        let paged = call(&[2, 8, 4, 64], &[10, 64, 2, 64], Some(&[2, 5])).check().unwrap();
        assert_eq!(paged.kv_shape(), [2, 2, 320, 64]);
    }

    #[test]
    fn shapes_that_do_not_fit_are_refused() {
        let refused = |t: KvCacheTensors, message: &str| {
            let e = t.check().unwrap_err();
            assert!(e.to_string().contains(message), "{e}");
        };
        refused(call(&[2, 8, 4, 64], &[2, 300, 2, 64], None), "one query row per sequence");
        refused(call(&[2, 8, 1, 64], &[3, 300, 2, 64], None), "q's batch 2");
        refused(call(&[2, 8, 4, 64], &[10, 64, 2, 64], Some(&[3, 5])), "page_table must have shape");
        let mut t = call(&[2, 8, 1, 64], &[2, 300, 2, 64], None);
        t.cache_seqlens = Some(tensor(&[3], CODE_INT, 32));
        refused(t, "cache_seqlens must have shape");
        let mut t = call(&[2, 8, 1, 64], &[2, 300, 2, 64], None);
        t.k.strides = vec![300 * 256, 256, 64, 1];
        t.k.shape = vec![2, 300, 2, 64];
        refused(t, "same strides");
    }
}
