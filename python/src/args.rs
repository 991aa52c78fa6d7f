//! The arguments of one attention call, read from their DLPack descriptions
//! and checked before any GPU work: element types, ranks, contiguity, how
//! the shapes fit together and that every tensor is on one CUDA device.

use crate::dlpack::{
    CODE_BFLOAT, CODE_FLOAT, CODE_FLOAT8_E4M3FN, CODE_INT, CODE_UINT, DEVICE_CUDA, TensorInfo, row_major_strides,
};
use sdpa::device::RowStrides;
use sdpa::{Layout, OutputDtype};
use std::fmt;

/// An element type the binding takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Element {
    /// E4M3 codes: DLPack `float8_e4m3fn`, or their bits as `uint8`.
    E4m3,
    /// IEEE half.
    F16,
    /// bfloat16.
    Bf16,
    /// IEEE single.
    F32,
    /// 32-bit signed integer (prefix sums of sequence lengths).
    I32,
}

impl Element {
    /// The element type of a DLPack dtype, where it is one of these.
    pub fn of(info: &TensorInfo) -> Option<Element> {
        let dtype = info.dtype;
        if dtype.lanes != 1 {
            return None;
        }
        match (dtype.code, dtype.bits) {
            (CODE_UINT, 8) | (CODE_FLOAT8_E4M3FN, 8) => Some(Element::E4m3),
            (CODE_FLOAT, 16) => Some(Element::F16),
            (CODE_BFLOAT, 16) => Some(Element::Bf16),
            (CODE_FLOAT, 32) => Some(Element::F32),
            (CODE_INT, 32) => Some(Element::I32),
            _ => None,
        }
    }
}

/// Why the arguments were refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ArgError {
    /// A tensor of an element type the argument cannot take.
    Dtype {
        /// Which argument.
        what: &'static str,
        /// What it may be.
        expected: &'static str,
        /// What it is, as DLPack (code, bits, lanes).
        found: (u8, u8, u16),
    },
    /// A tensor of the wrong rank.
    Rank {
        /// Which argument.
        what: &'static str,
        /// Its shape.
        shape: Vec<i64>,
        /// The rank it needs.
        expected: usize,
    },
    /// A tensor that is not contiguous row-major.
    NotContiguous {
        /// Which argument.
        what: &'static str,
        /// Its shape.
        shape: Vec<i64>,
        /// Its strides, in elements.
        strides: Vec<i64>,
    },
    /// An output the producer marked read-only.
    ReadOnly(&'static str),
    /// Shapes that do not fit together.
    Shape(String),
    /// An option outside the values it takes.
    OutOfRange {
        /// Which option.
        what: &'static str,
        /// What it may be.
        expected: &'static str,
        /// What it is.
        value: String,
    },
    /// A tensor that is not in CUDA device memory.
    NotCuda {
        /// Which argument.
        what: &'static str,
        /// Its DLPack device type.
        device_type: i32,
    },
    /// Tensors on different devices.
    Devices {
        /// Which argument.
        what: &'static str,
        /// Its device.
        ordinal: i32,
        /// Q's device.
        expected: i32,
    },
}

impl fmt::Display for ArgError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ArgError::Dtype { what, expected, found: (code, bits, lanes) } => {
                write!(f, "{what} must be {expected}, got DLPack dtype (code {code}, bits {bits}, lanes {lanes})")
            }
            ArgError::Rank { what, shape, expected } => {
                write!(f, "{what} must have {expected} dimensions, got shape {shape:?}")
            }
            ArgError::NotContiguous { what, shape, strides } => {
                write!(f, "{what} must be contiguous row-major, got shape {shape:?} with strides {strides:?}")?;
                if ["q", "k", "v"].contains(what) {
                    write!(f, " ([B, S, H, D] and packed inputs may have strided rows: the last dimension")?;
                    write!(f, " contiguous, the batches S rows apart)")?;
                }
                Ok(())
            }
            ArgError::ReadOnly(what) => write!(f, "{what} is read-only"),
            ArgError::Shape(why) => write!(f, "{why}"),
            ArgError::OutOfRange { what, expected, value } => write!(f, "{what} must be {expected}, got {value}"),
            ArgError::NotCuda { what, device_type } => {
                write!(f, "{what} must be a CUDA tensor, got DLPack device type {device_type} (CUDA is 2)")
            }
            ArgError::Devices { what, ordinal, expected } => {
                write!(f, "{what} is on CUDA device {ordinal}, but q is on device {expected}")
            }
        }
    }
}

impl ArgError {
    /// Whether the error is about an element type (a Python `TypeError`)
    /// rather than a value (`ValueError`).
    pub fn is_type_error(&self) -> bool {
        matches!(self, ArgError::Dtype { .. })
    }
}

/// One checked tensor: its first element's device address and its shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Operand<const N: usize> {
    /// Device address of the first element.
    pub address: u64,
    /// Sizes.
    pub shape: [usize; N],
}

/// A call's checked arguments: Q `[B, Hq, Sq, D]`, K and V `[B, Hkv, Skv,
/// D]` E4M3, the three descales `(B, Hkv)` f32, the output `[B, Hq, Sq, D]`
/// f16 or bf16 and, if asked, the log-sum-exp f32 (`[B, Hq, Sq]`, `[B, Sq,
/// Hq]` for `[B, S, H, D]` tensors: the output's rows), all on CUDA device
/// `ordinal`. The 4-dimensional shapes are given in `[B, H, S, D]` order
/// whatever `layout` lays the memory out as; the log-sum-exp's in its
/// memory order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Call {
    /// The CUDA device.
    pub ordinal: usize,
    /// How Q, K, V and the output lie in memory.
    pub layout: Layout,
    /// Q.
    pub q: Operand<4>,
    /// K.
    pub k: Operand<4>,
    /// V.
    pub v: Operand<4>,
    /// Q's, K's and V's descales.
    pub descales: [Operand<2>; 3],
    /// The output.
    pub out: Operand<4>,
    /// The output's element type.
    pub out_dtype: OutputDtype,
    /// The log-sum-exp output, where asked for.
    pub lse: Option<Operand<3>>,
    /// Q's, K's and V's row strides where not dense (`[B, S, H, D]` only).
    pub row_strides: [Option<RowStrides>; 3],
}

/// The tensors of one call, as their capsules described them.
pub struct Tensors {
    /// Q.
    pub q: TensorInfo,
    /// K.
    pub k: TensorInfo,
    /// V.
    pub v: TensorInfo,
    /// Q's, K's and V's descales.
    pub descales: [TensorInfo; 3],
    /// The output.
    pub out: TensorInfo,
    /// The log-sum-exp output, where asked for.
    pub lse: Option<TensorInfo>,
}

/// Names of the descale arguments, in `Tensors::descales` order.
pub const DESCALE_NAMES: [&str; 3] = ["q_descale", "k_descale", "v_descale"];

impl Tensors {
    /// Checks the tensors, contiguous in `layout` (the 4-dimensional ones
    /// given in its memory order; Q, K and V of `Bshd` may have strided
    /// rows, [`e4m3_rows`]): types and contiguity first, then how
    /// their shapes fit together, then their devices (so that the checks
    /// that need no GPU come first).
    pub fn check(&self, layout: Layout) -> Result<Call, ArgError> {
        let e4m3 = |info, what| match layout {
            Layout::Bhsd => operand::<4>(info, what, &[Element::E4m3], E4M3).map(|o| (o, None)),
            Layout::Bshd => e4m3_rows::<4>(info, what).map(|(o, strides)| (bhsd(o, layout), strides)),
        };
        let ((q, q_strides), (k, k_strides), (v, v_strides)) =
            (e4m3(&self.q, "q")?, e4m3(&self.k, "k")?, e4m3(&self.v, "v")?);
        let descales = descale_operands(&self.descales)?;
        let (out, out_dtype, lse) = outputs::<4, 3>(&self.out, self.lse.as_ref())?;
        let out = bhsd(out, layout);
        check_shapes(layout, [q.shape, k.shape, v.shape, out.shape], &descales)?;
        if let Some(lse) = lse {
            check_lse_shape(layout, q.shape, lse.shape)?;
        }
        let ordinal = self.check_devices()?;
        let row_strides = [q_strides, k_strides, v_strides];
        Ok(Call { ordinal, layout, q, k, v, descales, out, out_dtype, lse, row_strides })
    }

    /// Every tensor on the CUDA device Q is on; that device's ordinal.
    fn check_devices(&self) -> Result<usize, ArgError> {
        let named = [("q", &self.q), ("k", &self.k), ("v", &self.v), ("out", &self.out)]
            .into_iter()
            .chain(DESCALE_NAMES.into_iter().zip(&self.descales))
            .chain(self.lse.iter().map(|info| ("lse", info)));
        on_one_device(named)
    }
}

/// `operand` of a tensor laid out `layout`, its shape in `[B, H, S, D]`
/// order.
fn bhsd(operand: Operand<4>, layout: Layout) -> Operand<4> {
    let [b, s_or_h, h_or_s, d] = operand.shape;
    let shape = match layout {
        Layout::Bhsd => operand.shape,
        Layout::Bshd => [b, h_or_s, s_or_h, d],
    };
    Operand { shape, ..operand }
}

/// Every tensor of `named` on one CUDA device, the first's (Q's); that
/// device's ordinal.
pub fn on_one_device<'t>(named: impl IntoIterator<Item = (&'static str, &'t TensorInfo)>) -> Result<usize, ArgError> {
    let mut expected = None;
    for (what, info) in named {
        if info.device.device_type != DEVICE_CUDA {
            return Err(ArgError::NotCuda { what, device_type: info.device.device_type });
        }
        let first = *expected.get_or_insert(info.device.device_id);
        if info.device.device_id != first {
            return Err(ArgError::Devices { what, ordinal: info.device.device_id, expected: first });
        }
    }
    let ordinal = expected.unwrap_or(0);
    usize::try_from(ordinal).map_err(|_| ArgError::Devices { what: "q", ordinal, expected: 0 })
}

/// A tensor of one of `elements`, rank `N`, contiguous row-major.
pub fn operand<const N: usize>(
    info: &TensorInfo,
    what: &'static str,
    elements: &[Element],
    expected: &'static str,
) -> Result<Operand<N>, ArgError> {
    let operand = typed::<N>(info, what, elements, expected)?;
    if !is_contiguous(&info.shape, &info.strides) {
        return Err(not_contiguous(info, what));
    }
    Ok(operand)
}

/// The three descales: float32, rank 2, contiguous.
pub fn descale_operands(infos: &[TensorInfo; 3]) -> Result<[Operand<2>; 3], ArgError> {
    let mut descales = [Operand { address: 0, shape: [0; 2] }; 3];
    for (i, info) in infos.iter().enumerate() {
        descales[i] = operand::<2>(info, DESCALE_NAMES[i], &[Element::F32], "float32")?;
    }
    Ok(descales)
}

/// The output (float16 or bfloat16, rank `O`) and its element type, and
/// the log-sum-exp where asked for (float32, rank `L`): contiguous and
/// writable.
pub fn outputs<const O: usize, const L: usize>(
    out: &TensorInfo,
    lse: Option<&TensorInfo>,
) -> Result<(Operand<O>, OutputDtype, Option<Operand<L>>), ArgError> {
    let out_operand = operand::<O>(out, "out", &[Element::F16, Element::Bf16], "float16 or bfloat16")?;
    let lse_operand = match lse {
        Some(info) => Some(operand::<L>(info, "lse", &[Element::F32], "float32")?),
        None => None,
    };
    if out.read_only {
        return Err(ArgError::ReadOnly("out"));
    }
    if lse.is_some_and(|info| info.read_only) {
        return Err(ArgError::ReadOnly("lse"));
    }
    let dtype = match Element::of(out) {
        Some(Element::Bf16) => OutputDtype::Bf16,
        _ => OutputDtype::F16,
    };
    Ok((out_operand, dtype, lse_operand))
}

/// An E4M3 tensor of rank `N` whose rows interleave heads (`[B, S, H, D]`,
/// or a packed batch's `[rows, H, D]`): contiguous row-major, or strided
/// as the kernels read in place: the last dimension contiguous and the
/// dimensions before the heads one row index (`B` batches `S` rows apart),
/// as slices of a fused QKV are. Its row strides, `None` where dense (the
/// library checks what it can read: [`sdpa::device::RowStrides`]).
pub fn e4m3_rows<const N: usize>(
    info: &TensorInfo,
    what: &'static str,
) -> Result<(Operand<N>, Option<RowStrides>), ArgError> {
    let operand = typed::<N>(info, what, &[Element::E4m3], E4M3)?;
    if is_contiguous(&info.shape, &info.strides) {
        return Ok((operand, None));
    }
    let (shape, strides) = (&operand.shape, &info.strides);
    let strides: Option<Vec<usize>> = strides.iter().map(|&s| usize::try_from(s).ok()).collect();
    let rows = strides.and_then(|strides| RowStrides::flattened(shape, &strides));
    let Some(rows) = rows else { return Err(not_contiguous(info, what)) };
    Ok((operand, Some(rows).filter(|s| !s.is_dense(shape[N - 2], shape[N - 1]))))
}

/// What E4M3 arguments say they take.
pub const E4M3: &str = "float8_e4m3fn (or its uint8 bits)";

/// `info`'s address and shape, its element one of `elements` and its rank
/// `N`.
fn typed<const N: usize>(
    info: &TensorInfo,
    what: &'static str,
    elements: &[Element],
    expected: &'static str,
) -> Result<Operand<N>, ArgError> {
    if !Element::of(info).is_some_and(|e| elements.contains(&e)) {
        let d = info.dtype;
        return Err(ArgError::Dtype { what, expected, found: (d.code, d.bits, d.lanes) });
    }
    let mut shape = [0usize; N];
    if info.shape.len() != N || info.shape.iter().any(|&n| n < 0) {
        return Err(ArgError::Rank { what, shape: info.shape.clone(), expected: N });
    }
    for (to, &from) in shape.iter_mut().zip(&info.shape) {
        *to = from as usize;
    }
    Ok(Operand { address: info.address, shape })
}

/// The error for a tensor laid out as no argument takes.
fn not_contiguous(info: &TensorInfo, what: &'static str) -> ArgError {
    ArgError::NotContiguous { what, shape: info.shape.clone(), strides: info.strides.clone() }
}

/// Whether `strides` lay `shape` out compactly in row-major order (the
/// stride of a dimension of size 1 does not matter; an empty tensor is
/// contiguous).
fn is_contiguous(shape: &[i64], strides: &[i64]) -> bool {
    if shape.contains(&0) {
        return true;
    }
    let expected = row_major_strides(shape);
    shape.iter().zip(strides).zip(&expected).all(|((&n, &s), &e)| n == 1 || s == e)
}

/// Q `[B, Hq, Sq, D]`, K and V `[B, Hkv, Skv, D]` (equal), the output Q's
/// shape (each in that order, shown in `layout`'s memory order in errors)
/// and the descales `(B, Hkv)`.
fn check_shapes(layout: Layout, shapes: [[usize; 4]; 4], descales: &[Operand<2>; 3]) -> Result<(), ArgError> {
    let [q, k, v, out] = shapes.map(|s| layout.memory_order(s));
    if k != v {
        return Err(ArgError::Shape(format!("k and v must have the same shape, got {k:?} and {v:?}")));
    }
    if q[0] != k[0] || q[3] != k[3] {
        return Err(ArgError::Shape(format!("q {q:?} and k {k:?} must agree on batch and head_dim")));
    }
    let [_, heads_kv, _, _] = shapes[1];
    let expected = [k[0], heads_kv];
    for (name, descale) in DESCALE_NAMES.iter().zip(descales) {
        if descale.shape != expected {
            return Err(ArgError::Shape(format!(
                "{name} must have shape (batch, num_heads_k) = {expected:?}, got {:?}",
                descale.shape
            )));
        }
    }
    if out != q {
        return Err(ArgError::Shape(format!("out must have q's shape {q:?}, got {out:?}")));
    }
    Ok(())
}

/// The log-sum-exp of Q `[B, Hq, Sq, D]`'s rows in the output's order:
/// `[B, Hq, Sq]`, or `[B, Sq, Hq]` for `[B, S, H, D]` tensors.
fn check_lse_shape(layout: Layout, [b, hq, sq, _]: [usize; 4], lse: [usize; 3]) -> Result<(), ArgError> {
    let (expected, names) = match layout {
        Layout::Bhsd => ([b, hq, sq], "(batch, num_heads, seqlen_q)"),
        Layout::Bshd => ([b, sq, hq], "(batch, seqlen_q, num_heads)"),
    };
    if lse == expected {
        Ok(())
    } else {
        Err(ArgError::Shape(format!("lse must have shape {names} = {expected:?}, got {lse:?}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dlpack::DlDevice;

    use crate::dlpack::cuda_tensor as tensor;

    fn call(q: &[i64], kv: &[i64], descale: &[i64]) -> Tensors {
        let e4m3 = |s: &[i64]| tensor(s, CODE_UINT, 8);
        let f32s = || tensor(descale, CODE_FLOAT, 32);
        Tensors {
            q: e4m3(q),
            k: e4m3(kv),
            v: tensor(kv, CODE_FLOAT8_E4M3FN, 8),
            descales: [f32s(), f32s(), f32s()],
            out: tensor(q, CODE_BFLOAT, 16),
            lse: None,
        }
    }

    #[test]
    fn a_grouped_query_call_passes_with_its_device_and_output_type() {
        let checked = call(&[2, 8, 100, 64], &[2, 2, 300, 64], &[2, 2]).check(Layout::Bhsd).unwrap();
        assert_eq!(checked.ordinal, 0);
        assert_eq!(checked.q.shape, [2, 8, 100, 64]);
        assert_eq!(checked.k.shape, [2, 2, 300, 64]);
        assert_eq!(checked.out_dtype, OutputDtype::Bf16);
    }

    #[test]
    fn a_bshd_call_is_checked_in_its_memory_order_and_kept_in_bhsd_order() {
        // B=2, Sq=100, Hq=8, Skv=300, Hkv=2, D=64, laid out [B, S, H, D].
        let checked = call(&[2, 100, 8, 64], &[2, 300, 2, 64], &[2, 2]).check(Layout::Bshd).unwrap();
        assert_eq!(checked.layout, Layout::Bshd);
        assert_eq!(
            (checked.q.shape, checked.k.shape, checked.out.shape),
            ([2, 8, 100, 64], [2, 2, 300, 64], [2, 8, 100, 64])
        );
        let e = call(&[2, 100, 8, 64], &[2, 300, 2, 64], &[2, 300]).check(Layout::Bshd).unwrap_err();
        assert!(e.to_string().starts_with("q_descale must have shape (batch, num_heads_k) = [2, 2]"), "{e}");
        let mut t = call(&[2, 100, 8, 64], &[2, 300, 2, 64], &[2, 2]);
        t.out = tensor(&[2, 8, 100, 64], CODE_BFLOAT, 16);
        let e = t.check(Layout::Bshd).unwrap_err();
        assert_eq!(e.to_string(), "out must have q's shape [2, 100, 8, 64], got [2, 8, 100, 64]");
    }

    #[test]
    fn the_log_sum_exp_follows_the_outputs_rows() {
        let mut t = call(&[2, 100, 8, 64], &[2, 300, 2, 64], &[2, 2]);
        t.lse = Some(tensor(&[2, 100, 8], CODE_FLOAT, 32));
        assert_eq!(t.check(Layout::Bshd).unwrap().lse.map(|l| l.shape), Some([2, 100, 8]));
        t.lse = Some(tensor(&[2, 8, 100], CODE_FLOAT, 32));
        let e = t.check(Layout::Bshd).unwrap_err();
        assert_eq!(e.to_string(), "lse must have shape (batch, seqlen_q, num_heads) = [2, 100, 8], got [2, 8, 100]");
        let mut t = call(&[2, 8, 100, 64], &[2, 2, 300, 64], &[2, 2]);
        t.lse = Some(tensor(&[2, 8, 100], CODE_FLOAT, 32));
        assert_eq!(t.check(Layout::Bhsd).unwrap().lse.map(|l| l.shape), Some([2, 8, 100]));
        t.lse = Some(tensor(&[2, 8, 100], CODE_BFLOAT, 16));
        assert!(t.check(Layout::Bhsd).unwrap_err().to_string().starts_with("lse must be float32"));
        t.lse = Some(tensor(&[2, 8, 100], CODE_FLOAT, 32));
        if let Some(lse) = &mut t.lse {
            lse.read_only = true;
        }
        assert_eq!(t.check(Layout::Bhsd), Err(ArgError::ReadOnly("lse")));
    }

    #[test]
    fn a_half_precision_input_is_a_type_error() {
        let mut t = call(&[1, 2, 16, 64], &[1, 2, 16, 64], &[1, 2]);
        t.k = tensor(&[1, 2, 16, 64], CODE_FLOAT, 16);
        let e = t.check(Layout::Bhsd).unwrap_err();
        assert!(e.is_type_error());
        assert!(e.to_string().starts_with("k must be float8_e4m3fn"), "{e}");
    }

    #[test]
    fn a_transposed_input_is_not_contiguous() {
        let mut t = call(&[1, 2, 16, 64], &[1, 2, 16, 64], &[1, 2]);
        t.q.strides = vec![2048, 64, 128, 1];
        assert!(matches!(t.check(Layout::Bhsd), Err(ArgError::NotContiguous { what: "q", .. })));
    }

    #[test]
    fn bshd_slices_of_a_fused_qkv_keep_their_row_strides() {
        // Q, K and V of a fused [B=2, S=16, 3, H=4, D=64] QKV.
        let mut t = call(&[2, 16, 4, 64], &[2, 16, 4, 64], &[2, 4]);
        for info in [&mut t.q, &mut t.k, &mut t.v] {
            info.strides = vec![16 * 768, 768, 64, 1];
        }
        let checked = t.check(Layout::Bshd).unwrap();
        assert_eq!(checked.row_strides, [Some(RowStrides { row: 768, head: 64 }); 3]);
        // Dense ones have none, and size-one dimensions' strides do not matter.
        let mut t = call(&[1, 16, 4, 64], &[1, 1, 4, 64], &[1, 4]);
        t.q.strides = vec![5, 256, 64, 1];
        t.k.strides = vec![256, 3, 64, 1];
        assert_eq!(t.check(Layout::Bshd).map(|c| c.row_strides), Ok([None; 3]));
    }

    #[test]
    fn rows_that_do_not_flatten_are_not_contiguous() {
        let strided = |strides: Vec<i64>| {
            let mut t = call(&[2, 16, 4, 64], &[2, 16, 4, 64], &[2, 4]);
            t.q.strides = strides;
            t.check(Layout::Bshd)
        };
        // Batches not S rows apart (a slice along S), the last dimension
        // strided, a negative stride; the `bhsd` layout takes no strides.
        for bad in [vec![32 * 256, 256, 64, 1], vec![16 * 512, 512, 128, 2], vec![-4096, 256, 64, 1]] {
            let e = strided(bad.clone()).unwrap_err();
            assert!(matches!(e, ArgError::NotContiguous { what: "q", .. }), "{bad:?}: {e}");
            assert!(e.to_string().contains("batches S rows apart"), "{e}");
        }
        let mut t = call(&[2, 4, 16, 64], &[2, 4, 16, 64], &[2, 4]);
        t.q.strides = vec![4 * 16 * 128, 16 * 128, 128, 1];
        assert!(matches!(t.check(Layout::Bhsd), Err(ArgError::NotContiguous { what: "q", .. })));
    }

    #[test]
    fn size_one_dimensions_may_have_any_stride() {
        let mut t = call(&[1, 1, 16, 64], &[1, 1, 16, 64], &[1, 1]);
        t.q.strides = vec![7, 9, 64, 1];
        assert!(t.check(Layout::Bhsd).is_ok());
    }

    #[test]
    fn mismatched_shapes_and_descales_are_refused() {
        let e = call(&[1, 4, 16, 64], &[1, 2, 16, 128], &[1, 2]).check(Layout::Bhsd).unwrap_err();
        assert!(e.to_string().contains("agree on batch and head_dim"), "{e}");
        let e = call(&[1, 4, 16, 64], &[1, 2, 16, 64], &[1, 4]).check(Layout::Bhsd).unwrap_err();
        assert!(e.to_string().starts_with("q_descale must have shape (batch, num_heads_k) = [1, 2]"), "{e}");
        let mut t = call(&[1, 4, 16, 64], &[1, 2, 16, 64], &[1, 2]);
        t.v = tensor(&[1, 2, 17, 64], CODE_UINT, 8);
        assert!(t.check(Layout::Bhsd).unwrap_err().to_string().starts_with("k and v must have the same shape"));
    }

    #[test]
    fn host_tensors_and_mixed_devices_are_refused_after_the_shape_checks() {
        let mut t = call(&[1, 2, 16, 64], &[1, 2, 16, 64], &[1, 2]);
        t.v.device = DlDevice { device_type: 1, device_id: 0 };
        assert_eq!(t.check(Layout::Bhsd), Err(ArgError::NotCuda { what: "v", device_type: 1 }));
        let mut t = call(&[1, 2, 16, 64], &[1, 2, 16, 64], &[1, 2]);
        t.descales[2].device.device_id = 1;
        assert_eq!(t.check(Layout::Bhsd), Err(ArgError::Devices { what: "v_descale", ordinal: 1, expected: 0 }));
    }

    #[test]
    fn a_read_only_output_is_refused() {
        let mut t = call(&[1, 2, 16, 64], &[1, 2, 16, 64], &[1, 2]);
        t.out.read_only = true;
        assert_eq!(t.check(Layout::Bhsd), Err(ArgError::ReadOnly("out")));
    }
}
