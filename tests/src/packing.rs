//! Packed batches for the tests (`packed`, `packed_schedule`, `cli_packed`,
//! `layouts`): prefix sums, one-batch `[1, H, total, D]` tensors (the
//! sequences' rows back to back, heads first as the reference reads them)
//! to and from the packed `[total, H, D]` layout, and `[B, H, S, D]`
//! tensors as `[B, S, H, D]`.

use sdpa::Fp8Tensor;
use sdpa::quant::from_codes;

/// Prefix sums of `lens`, from 0.
pub fn prefix_sums(lens: impl IntoIterator<Item = usize>) -> Vec<i32> {
    std::iter::once(0)
        .chain(lens.into_iter().scan(0i32, |at, l| {
            *at += l as i32;
            Some(*at)
        }))
        .collect()
}

/// A one-batch `[1, H, total, D]` tensor's codes as `[total, H, D]`.
pub fn packed_codes(t: &Fp8Tensor) -> Vec<u8> {
    let [_, heads, rows, d] = t.shape;
    (0..rows).flat_map(|r| (0..heads).flat_map(move |h| t.data[(h * rows + r) * d..][..d].iter().copied())).collect()
}

/// Rows `first .. first + len` of every head of a one-batch tensor, as a
/// tensor of their own.
pub fn rows_of(t: &Fp8Tensor, first: usize, len: usize) -> Fp8Tensor {
    let [_, heads, rows, d] = t.shape;
    let data = (0..heads).flat_map(|h| t.data[(h * rows + first) * d..][..len * d].iter().copied()).collect();
    from_codes(data, [1, heads, len, d], t.scales.clone())
}

/// A `[B, H, S, D]` tensor's codes laid out `[B, S, H, D]`.
pub fn bshd_codes(t: &Fp8Tensor) -> Vec<u8> {
    let [batch, heads, rows, d] = t.shape;
    (0..batch)
        .flat_map(|b| {
            (0..rows).flat_map(move |r| {
                (0..heads).flat_map(move |h| t.data[((b * heads + h) * rows + r) * d..][..d].iter().copied())
            })
        })
        .collect()
}

/// `[B, S, H, D]` values (`shape` given as `[B, H, S, D]`) back in `[B, H,
/// S, D]` order.
pub fn from_bshd<T: Copy>(values: &[T], [batch, heads, rows, d]: [usize; 4]) -> Vec<T> {
    (0..batch)
        .flat_map(|b| {
            (0..heads).flat_map(move |h| {
                (0..rows).flat_map(move |r| values[((b * rows + r) * heads + h) * d..][..d].iter().copied())
            })
        })
        .collect()
}

/// Batch entry `b` of a `[B, H, S, D]` tensor, as a one-batch tensor.
pub fn batch_of(t: &Fp8Tensor, b: usize) -> Fp8Tensor {
    let [_, heads, rows, d] = t.shape;
    let n = heads * rows * d;
    from_codes(t.data[b * n..][..n].to_vec(), [1, heads, rows, d], t.scales.clone())
}
