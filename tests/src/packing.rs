//! Packed batches for the tests (`packed`, `packed_schedule`, `cli_packed`):
//! prefix sums, and one-batch `[1, H, total, D]` tensors (the sequences'
//! rows back to back, heads first as the reference reads them) to and
//! from the packed `[total, H, D]` layout.

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
