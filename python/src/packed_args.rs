//! The arguments of one packed variable-length call (FlashAttention's
//! `flash_attn_varlen_func` layout), read from their DLPack descriptions and
//! checked before any GPU work, in the order `args` checks a dense call's:
//! element types, ranks and contiguity, then the shapes, then the devices.

use crate::args::{
    ArgError, DESCALE_NAMES, Element, Operand, descale_operands, e4m3_rows, on_one_device, operand, outputs,
};
use crate::dlpack::TensorInfo;
use sdpa::OutputDtype;
use sdpa::device::RowStrides;

/// A packed call's checked arguments: Q `[total_q, Hq, D]` and K, V
/// `[total_k, Hkv, D]` E4M3, the int32 prefix sums `[B + 1]` of the query
/// and key lengths, the descales `(B, Hkv)` f32, the output `[total_q, Hq,
/// D]` f16 or bf16 and, if asked, the log-sum-exp `[total_q, Hq]` f32, all
/// on CUDA device `ordinal`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PackedCall {
    /// The CUDA device.
    pub ordinal: usize,
    /// Q.
    pub q: Operand<3>,
    /// K.
    pub k: Operand<3>,
    /// V.
    pub v: Operand<3>,
    /// The prefix sums of the query lengths.
    pub cu_seqlens_q: Operand<1>,
    /// The prefix sums of the key lengths.
    pub cu_seqlens_k: Operand<1>,
    /// Q's, K's and V's descales.
    pub descales: [Operand<2>; 3],
    /// The output.
    pub out: Operand<3>,
    /// The output's element type.
    pub out_dtype: OutputDtype,
    /// The log-sum-exp output, where asked for.
    pub lse: Option<Operand<2>>,
    /// Q's, K's and V's row strides where not dense.
    pub row_strides: [Option<RowStrides>; 3],
}

impl PackedCall {
    /// Sequences in the batch.
    pub fn batch(&self) -> usize {
        self.cu_seqlens_q.shape[0] - 1
    }
}

/// The tensors of one packed call, as their capsules described them.
pub struct PackedTensors {
    /// Q.
    pub q: TensorInfo,
    /// K.
    pub k: TensorInfo,
    /// V.
    pub v: TensorInfo,
    /// The prefix sums of the query lengths.
    pub cu_seqlens_q: TensorInfo,
    /// The prefix sums of the key lengths.
    pub cu_seqlens_k: TensorInfo,
    /// Q's, K's and V's descales.
    pub descales: [TensorInfo; 3],
    /// The output.
    pub out: TensorInfo,
    /// The log-sum-exp output, where asked for.
    pub lse: Option<TensorInfo>,
}

impl PackedTensors {
    /// Checks the tensors: types and layouts, then how their shapes fit
    /// together, then their devices.
    pub fn check(&self) -> Result<PackedCall, ArgError> {
        let (q, q_strides) = e4m3_rows::<3>(&self.q, "q")?;
        let (k, k_strides) = e4m3_rows::<3>(&self.k, "k")?;
        let (v, v_strides) = e4m3_rows::<3>(&self.v, "v")?;
        let row_strides = [q_strides, k_strides, v_strides];
        let cu_seqlens_q = operand::<1>(&self.cu_seqlens_q, "cu_seqlens_q", &[Element::I32], "int32")?;
        let cu_seqlens_k = operand::<1>(&self.cu_seqlens_k, "cu_seqlens_k", &[Element::I32], "int32")?;
        let descales = descale_operands(&self.descales)?;
        let (out, out_dtype, lse) = outputs::<3, 2>(&self.out, self.lse.as_ref())?;
        let call =
            PackedCall { ordinal: 0, q, k, v, cu_seqlens_q, cu_seqlens_k, descales, out, out_dtype, lse, row_strides };
        check_shapes(&call)?;
        let named = [
            ("q", &self.q),
            ("k", &self.k),
            ("v", &self.v),
            ("cu_seqlens_q", &self.cu_seqlens_q),
            ("cu_seqlens_k", &self.cu_seqlens_k),
            ("out", &self.out),
        ]
        .into_iter()
        .chain(DESCALE_NAMES.into_iter().zip(&self.descales))
        .chain(self.lse.iter().map(|info| ("lse", info)));
        Ok(PackedCall { ordinal: on_one_device(named)?, ..call })
    }
}

/// Q `[total_q, Hq, D]`, K and V `[total_k, Hkv, D]` (equal), prefix sums
/// of `B + 1 >= 2` entries each, the descales `(B, Hkv)`, the output Q's
/// shape and the log-sum-exp `[total_q, Hq]`.
fn check_shapes(call: &PackedCall) -> Result<(), ArgError> {
    let (q, k) = (call.q.shape, call.k.shape);
    if k != call.v.shape {
        return Err(ArgError::Shape(format!("k and v must have the same shape, got {k:?} and {:?}", call.v.shape)));
    }
    if q[2] != k[2] {
        return Err(ArgError::Shape(format!("q {q:?} and k {k:?} must agree on head_dim")));
    }
    let [entries_q] = call.cu_seqlens_q.shape;
    let [entries_k] = call.cu_seqlens_k.shape;
    if entries_q != entries_k || entries_q < 2 {
        return Err(ArgError::Shape(format!(
            "cu_seqlens_q and cu_seqlens_k must both have batch + 1 >= 2 entries, got {entries_q} and {entries_k}"
        )));
    }
    let expected = [entries_q - 1, k[1]];
    for (name, descale) in DESCALE_NAMES.iter().zip(&call.descales) {
        if descale.shape != expected {
            return Err(ArgError::Shape(format!(
                "{name} must have shape (batch, num_heads_k) = {expected:?}, got {:?}",
                descale.shape
            )));
        }
    }
    if call.out.shape != q {
        return Err(ArgError::Shape(format!("out must have q's shape {q:?}, got {:?}", call.out.shape)));
    }
    if let Some(lse) = call.lse
        && lse.shape != [q[0], q[1]]
    {
        return Err(ArgError::Shape(format!(
            "lse must have shape (total_q, num_heads) = {:?}, got {:?}",
            [q[0], q[1]],
            lse.shape
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dlpack::{CODE_BFLOAT, CODE_FLOAT, CODE_INT, CODE_UINT};

    use crate::dlpack::cuda_tensor as tensor;

    /// Three sequences of 300 query and 500 key rows in all, Hq = 8,
    /// Hkv = 2, D = 64, with the log-sum-exp.
    fn call() -> PackedTensors {
        let f32s = |s: &[i64]| tensor(s, CODE_FLOAT, 32);
        PackedTensors {
            q: tensor(&[300, 8, 64], CODE_UINT, 8),
            k: tensor(&[500, 2, 64], CODE_UINT, 8),
            v: tensor(&[500, 2, 64], CODE_UINT, 8),
            cu_seqlens_q: tensor(&[4], CODE_INT, 32),
            cu_seqlens_k: tensor(&[4], CODE_INT, 32),
            descales: [f32s(&[3, 2]), f32s(&[3, 2]), f32s(&[3, 2])],
            out: tensor(&[300, 8, 64], CODE_BFLOAT, 16),
            lse: Some(f32s(&[300, 8])),
        }
    }

    #[test]
    fn a_grouped_query_packed_call_passes_with_its_batch() {
        let checked = call().check().unwrap();
        assert_eq!(checked.batch(), 3);
        assert_eq!(checked.q.shape, [300, 8, 64]);
        assert_eq!(checked.lse.map(|l| l.shape), Some([300, 8]));
        assert_eq!(checked.out_dtype, OutputDtype::Bf16);
        let mut without_lse = call();
        without_lse.lse = None;
        assert_eq!(without_lse.check().unwrap().lse, None);
    }

    #[test]
    fn prefix_sums_must_be_int32() {
        let mut t = call();
        t.cu_seqlens_k = tensor(&[4], CODE_INT, 64);
        let e = t.check().unwrap_err();
        assert!(e.is_type_error());
        assert!(e.to_string().starts_with("cu_seqlens_k must be int32"), "{e}");
    }

    #[test]
    fn prefix_sums_of_different_or_too_few_entries_are_refused() {
        let mut t = call();
        t.cu_seqlens_k = tensor(&[5], CODE_INT, 32);
        assert!(t.check().unwrap_err().to_string().contains("got 4 and 5"));
        let mut t = call();
        t.cu_seqlens_q = tensor(&[1], CODE_INT, 32);
        t.cu_seqlens_k = tensor(&[1], CODE_INT, 32);
        assert!(t.check().unwrap_err().to_string().contains("batch + 1 >= 2 entries"));
    }

    #[test]
    fn descales_follow_the_prefix_sums_batch() {
        let mut t = call();
        t.descales[1] = tensor(&[1, 2], CODE_FLOAT, 32);
        let e = t.check().unwrap_err();
        assert!(e.to_string().starts_with("k_descale must have shape (batch, num_heads_k) = [3, 2]"), "{e}");
    }

    #[test]
    fn a_wrong_log_sum_exp_or_output_is_refused() {
        let mut t = call();
        t.lse = Some(tensor(&[8, 300], CODE_FLOAT, 32));
        assert!(t.check().unwrap_err().to_string().starts_with("lse must have shape (total_q, num_heads)"));
        let mut t = call();
        t.out = tensor(&[300, 8, 128], CODE_BFLOAT, 16);
        assert!(t.check().unwrap_err().to_string().starts_with("out must have q's shape"));
        let mut t = call();
        if let Some(lse) = &mut t.lse {
            lse.read_only = true;
        }
        assert_eq!(t.check(), Err(ArgError::ReadOnly("lse")));
    }

    #[test]
    fn strided_rows_are_kept_and_prefix_sums_on_another_device_refused() {
        // K's heads apart by a whole head's rows (a `[H, rows, D]` tensor
        // transposed): rows 64 elements apart, heads 32000.
        let mut t = call();
        t.k.strides = vec![64, 32000, 1];
        let strides = t.check().map(|c| c.row_strides);
        assert_eq!(strides, Ok([None, Some(RowStrides { row: 64, head: 32000 }), None]));
        // A strided last dimension the kernels cannot read.
        t.k.strides = vec![256, 128, 2];
        assert!(matches!(t.check(), Err(ArgError::NotContiguous { what: "k", .. })));
        let mut t = call();
        t.cu_seqlens_q.device.device_id = 1;
        assert_eq!(t.check(), Err(ArgError::Devices { what: "cu_seqlens_q", ordinal: 1, expected: 0 }));
    }
}
