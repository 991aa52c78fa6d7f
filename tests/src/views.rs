//! Runs through the device API on views of host tensors, with the
//! log-sum-exp: the GPU tests of layouts and windows.

use sdpa::cudarc::driver::CudaStream;
use sdpa::device::{DeviceScales, Fp8View, OutputViewMut, RowStrides, RunExtras, ScaleLayout};
use sdpa::{Attention, AttnError, Fp8Tensor, Layout, Options};
use std::sync::Arc;

/// What one run gave, in `[B, Hq, Sq, D]` order whatever the layout: O's
/// bits, and the log-sum-exp as the layout lays it out.
pub struct RunOutput {
    /// O's bits, `[B, Hq, Sq, D]`.
    pub o_bits: Vec<u16>,
    /// The log-sum-exp, in the output's row order.
    pub lse: Vec<f32>,
}

/// How [`run_placed`] lays Q, K and V in device memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Placement {
    /// Each tensor contiguous in `opts.layout`.
    Dense,
    /// `[B, S, H, D]` rows with gaps ([`Fp8View::bshd_strided`]): each
    /// head `D + head_gap` elements from the next, each row `row_gap`
    /// elements past its last head; K's and V's heads side by side in one
    /// buffer, as the halves of a fused KV projection's rows. Q strided
    /// too, or dense (`decode` reads it dense). The gaps hold E4M3 NaN
    /// codes, so a read that strays into one poisons the output.
    Strided {
        /// Elements between one head's last and the next's first.
        head_gap: usize,
        /// Elements between a row's last head and the next row.
        row_gap: usize,
        /// Whether Q's rows have the gaps too.
        strided_q: bool,
    },
}

/// E4M3's NaN code, which fills the gaps of a [`Placement::Strided`].
const NAN_CODE: u8 = 0x7F;

/// `t`'s `[B, S, H, D]` rows (from its `[B, H, S, D]` data) placed
/// `strides` apart from element `first` of `into`.
fn place_rows(t: &Fp8Tensor, strides: RowStrides, into: &mut [u8], first: usize) {
    let [_, h, s, d] = t.shape;
    for (i, row) in t.data.chunks_exact(d).enumerate() {
        let (head, position) = ((i / s) % h, (i / (h * s)) * s + i % s);
        let at = first + position * strides.row + head * strides.head;
        into[at..at + d].copy_from_slice(row);
    }
}

/// Runs `q`, `k`, `v` (`[B, H, S, D]` tensors) through device views laid
/// out as `opts.layout`, with per-head scales, on an output and a
/// log-sum-exp poisoned with NaN.
pub fn run_with_lse(
    stream: &Arc<CudaStream>,
    attn: &Attention,
    tensors: (&Fp8Tensor, &Fp8Tensor, &Fp8Tensor),
    opts: &Options,
) -> Result<RunOutput, AttnError> {
    run_placed(stream, attn, tensors, opts, Placement::Dense)
}

/// [`run_with_lse`] with Q, K and V placed as `placement` says (a
/// `Strided` placement needs `opts.layout` `Bshd`).
pub fn run_placed(
    stream: &Arc<CudaStream>,
    attn: &Attention,
    (q, k, v): (&Fp8Tensor, &Fp8Tensor, &Fp8Tensor),
    opts: &Options,
    placement: Placement,
) -> Result<RunOutput, AttnError> {
    let layout = opts.layout;
    let memory = |t: &Fp8Tensor| layout.arrange(&t.data, t.shape);
    let plan = attn.plan_shapes(q.shape, k.shape, v.shape, opts)?;
    let mut ws = attn.workspace(&plan)?;
    let [qs, ks, vs] = [&q.scales, &k.scales, &v.scales].map(|s| stream.clone_htod(s).expect("scales"));
    let n = q.data.len();
    let mut o = stream.clone_htod(&vec![0x7FFFu16; n]).expect("o");
    let mut lse = stream.clone_htod(&vec![f32::NAN; n / q.shape[3]]).expect("lse");
    let view = |codes, t: &Fp8Tensor| match layout {
        Layout::Bshd => Fp8View::bshd(codes, layout.memory_order(t.shape)),
        _ => Fp8View::new(codes, t.shape),
    };
    let mut out = match layout {
        Layout::Bshd => OutputViewMut::bshd(o.as_view_mut(), opts.output, layout.memory_order(q.shape))?,
        _ => OutputViewMut::new(o.as_view_mut(), opts.output, q.shape)?,
    };
    let scales = DeviceScales::new(qs.as_view(), ks.as_view(), vs.as_view(), ScaleLayout::PerHead);
    let extras = RunExtras::new().lse(lse.as_view_mut());
    match placement {
        Placement::Dense => {
            let [qd, kd, vd] = [q, k, v].map(|t| stream.clone_htod(&memory(t)).expect("codes"));
            let (qv, kv, vv) = (view(qd.as_view(), q)?, view(kd.as_view(), k)?, view(vd.as_view(), v)?);
            attn.run_views_with(&plan, &qv, &kv, &vv, &scales, &mut out, &mut ws, extras)?;
        }
        Placement::Strided { head_gap, row_gap, strided_q } => {
            let [_, hq, _, d] = q.shape;
            let [_, hkv, _, _] = k.shape;
            let q_strides = RowStrides { row: hq * (d + head_gap) + row_gap, head: d + head_gap };
            let kv_strides = RowStrides { row: 2 * hkv * (d + head_gap) + row_gap, head: d + head_gap };
            let rows = |t: &Fp8Tensor| t.shape[0] * t.shape[2];
            let mut q_codes = vec![NAN_CODE; rows(q) * q_strides.row];
            place_rows(q, q_strides, &mut q_codes, 0);
            let v_first = hkv * kv_strides.head;
            let mut kv_codes = vec![NAN_CODE; rows(k) * kv_strides.row];
            place_rows(k, kv_strides, &mut kv_codes, 0);
            place_rows(v, kv_strides, &mut kv_codes, v_first);
            let qd = stream.clone_htod(&if strided_q { q_codes } else { memory(q) }).expect("q codes");
            let kvd = stream.clone_htod(&kv_codes).expect("kv codes");
            let qv = match strided_q {
                true => Fp8View::bshd_strided(qd.as_view(), layout.memory_order(q.shape), q_strides)?,
                false => view(qd.as_view(), q)?,
            };
            let strided = |first: usize, t: &Fp8Tensor| {
                Fp8View::bshd_strided(kvd.slice(first..), layout.memory_order(t.shape), kv_strides)
            };
            let (kv, vv) = (strided(0, k)?, strided(v_first, v)?);
            attn.run_views_with(&plan, &qv, &kv, &vv, &scales, &mut out, &mut ws, extras)?;
        }
    }
    let bits = stream.clone_dtoh(&o).expect("o back");
    let lse = stream.clone_dtoh(&lse).expect("lse back");
    stream.synchronize().expect("sync");
    let o_bits = layout.to_bhsd(&bits, q.shape);
    Ok(RunOutput { o_bits, lse })
}
