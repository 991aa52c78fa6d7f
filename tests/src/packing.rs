//! Packed batches for the tests (`packed`, `packed_schedule`, `cli_packed`,
//! `layouts`): prefix sums, one-batch `[1, H, total, D]` tensors (the
//! sequences' rows back to back, heads first as the reference reads them)
//! to and from the packed `[total, H, D]` layout (`[B, H, S, D]` tensors
//! as `[B, S, H, D]` are `sdpa::Layout::arrange`'s).

use sdpa::cudarc::driver::CudaStream;
use sdpa::device::{DeviceScales, Fp8View, OutputViewMut, PackedSeqs, RunExtras, ScaleLayout};
use sdpa::quant::from_codes;
use sdpa::tensor::to_f32;
use sdpa::{Attention, AttnError, Fp8Tensor, Layout, Options};
use std::sync::Arc;

/// Prefix sums of `lens`, from 0.
pub fn prefix_sums(lens: impl IntoIterator<Item = usize>) -> Vec<i32> {
    std::iter::once(0)
        .chain(lens.into_iter().scan(0i32, |at, l| {
            *at += l as i32;
            Some(*at)
        }))
        .collect()
}

/// A one-batch `[1, H, total, D]` tensor's codes as `[total, H, D]`: its
/// `[B, S, H, D]` order.
pub fn packed_codes(t: &Fp8Tensor) -> Vec<u8> {
    Layout::Bshd.arrange(&t.data, t.shape)
}

/// Rows `first .. first + len` of every head of a one-batch tensor, as a
/// tensor of their own.
pub fn rows_of(t: &Fp8Tensor, first: usize, len: usize) -> Fp8Tensor {
    let [_, heads, rows, d] = t.shape;
    let data = (0..heads).flat_map(|h| t.data[(h * rows + first) * d..][..len * d].iter().copied()).collect();
    from_codes(data, [1, heads, len, d], t.scales.clone())
}

/// Rows `first .. first + len` of packed `[total, H, D]` values (a packed
/// run's output), as `[H, len, D]` like the reference (`D` = 1: a packed
/// log-sum-exp `[total, H]`).
pub fn packed_rows<T: Copy>(values: &[T], [heads, d]: [usize; 2], first: usize, len: usize) -> Vec<T> {
    (0..heads)
        .flat_map(|h| (first..first + len).flat_map(move |r| ((r * heads + h) * d)..((r * heads + h) * d + d)))
        .map(|at| values[at])
        .collect()
}

/// Rows `first .. first + len` of every head of one-batch `[1, H, total,
/// D]` values (an emulated packed run's output), as `[H, len, D]`, each
/// value rounded to f16 as the kernels store it.
pub fn sequence_rows_f16(values: &[f32], [heads, total, d]: [usize; 3], first: usize, len: usize) -> Vec<f32> {
    (0..heads)
        .flat_map(|h| values[(h * total + first) * d..][..len * d].iter())
        .map(|&x| half::f16::from_f32(x).to_f32())
        .collect()
}

/// Batch entry `b` of a `[B, H, S, D]` tensor, as a one-batch tensor.
pub fn batch_of(t: &Fp8Tensor, b: usize) -> Fp8Tensor {
    let [_, heads, rows, d] = t.shape;
    let n = heads * rows * d;
    from_codes(t.data[b * n..][..n].to_vec(), [1, heads, rows, d], t.scales.clone())
}

/// What one packed run gave: O as `[total_q, Hq, D]` values and the
/// log-sum-exp as `[total_q, Hq]`.
pub struct PackedOutput {
    /// O's values.
    pub o: Vec<f32>,
    /// The log-sum-exp.
    pub lse: Vec<f32>,
}

/// Runs `q`, `k`, `v` (one-batch tensors whose rows are the sequences',
/// back to back) packed, with prefix sums `cu_q`, `cu_k` and longest
/// lengths `max`, on an output and log-sum-exp poisoned with NaN.
#[allow(clippy::too_many_arguments)]
pub fn run_packed(
    stream: &Arc<CudaStream>,
    attn: &Attention,
    (q, k, v): (&Fp8Tensor, &Fp8Tensor, &Fp8Tensor),
    (cu_q, cu_k): (&[i32], &[i32]),
    max: [usize; 2],
    opts: &Options,
) -> Result<PackedOutput, AttnError> {
    let ([_, hq, total_q, d], [_, hkv, total_k, _]) = (q.shape, k.shape);
    let (q_shape, kv_shape) = ([total_q, hq, d], [total_k, hkv, d]);
    let [qd, kd, vd] = [q, k, v].map(|t| stream.clone_htod(&packed_codes(t)).expect("codes"));
    let [cu_qd, cu_kd] = [cu_q, cu_k].map(|c| stream.clone_htod(c).expect("prefix sums"));
    let seqs = PackedSeqs::new(cu_qd.as_view(), cu_kd.as_view(), max[0], max[1])?;
    let plan = attn.plan_packed(q_shape, kv_shape, kv_shape, &seqs, opts)?;
    let mut ws = attn.workspace(&plan)?;
    let [qs, ks, vs] = [&q.scales, &k.scales, &v.scales].map(|s| stream.clone_htod(s).expect("scales"));
    let mut o = stream.clone_htod(&vec![0x7FFFu16; total_q * hq * d]).expect("o");
    let mut lse = stream.clone_htod(&vec![f32::NAN; total_q * hq]).expect("lse");
    attn.run_packed(
        &plan,
        &Fp8View::packed(qd.as_view(), q_shape)?,
        &Fp8View::packed(kd.as_view(), kv_shape)?,
        &Fp8View::packed(vd.as_view(), kv_shape)?,
        &seqs,
        &DeviceScales::new(qs.as_view(), ks.as_view(), vs.as_view(), ScaleLayout::PerHead),
        &mut OutputViewMut::packed(o.as_view_mut(), opts.output, q_shape)?,
        &mut ws,
        RunExtras::new().lse(lse.as_view_mut()),
    )?;
    let bits = stream.clone_dtoh(&o).expect("o back");
    let lse = stream.clone_dtoh(&lse).expect("lse back");
    stream.synchronize().expect("sync");
    Ok(PackedOutput { o: bits.iter().map(|&x| to_f32(opts.output, x)).collect(), lse })
}

#[cfg(test)]
mod tests {
    use super::*;
    use sdpa::quant::random_problem;

    /// A sequence's rows read back from the packed layout are the
    /// one-batch tensor's own rows.
    #[test]
    fn packed_rows_are_the_rows_of_the_unpacked_tensor() {
        let (q, _, _) = random_problem([1, 3, 50, 64], [1, 3, 50, 64], 9);
        let packed = packed_codes(&q);
        for (first, len) in [(0, 50), (7, 1), (20, 13), (50, 0)] {
            assert_eq!(packed_rows(&packed, [3, 64], first, len), rows_of(&q, first, len).data, "{first} {len}");
        }
    }
}
