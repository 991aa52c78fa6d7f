//! FP8 (E4M3) quantization on the host, and the deterministic random inputs
//! the tests, the gate and the CLI use.
//!
//! Quantization is per head: one f32 scale per head `h`, taken over every
//! batch, row and dimension of that head, `scale = amax / 448` (so the
//! largest magnitude lands on the largest E4M3 value), or 1.0 for a head that
//! is all zeros. Codes come from the `float8` crate's `F8E4M3` conversion:
//! round to nearest (ties to even), saturating to ±448, never NaN for a
//! finite input.

use float8::F8E4M3;

use crate::error::AttnError;
use crate::tensor::Fp8Tensor;

/// Largest finite E4M3 magnitude, as f64.
const E4M3_MAX: f64 = kernels_gpu::fp8::E4M3_MAX as f64;

/// Encodes one value as an E4M3 code: round to nearest, ties to even,
/// saturating to ±448 (codes `0x7E`/`0xFE`). A NaN input gives the NaN code
/// `0x7F`.
pub fn encode_e4m3(x: f64) -> u8 {
    F8E4M3::from_f64(x).to_bits()
}

/// Quantizes `values` (row-major `[B, H, S, D]`) to E4M3 with one scale per
/// head (see the module docs). The tensor is called "tensor" in errors; see
/// [`quantize_per_head_named`].
///
/// # Errors
/// [`AttnError::BufferLength`] when `values.len()` does not match `shape`;
/// [`AttnError::InvalidScale`] when a head holds a non-finite value (its
/// scale would not be finite) or values so small that `amax / 448`
/// underflows to zero; [`AttnError::TooLarge`] when the shape's element count
/// overflows `usize`.
pub fn quantize_per_head(values: &[f32], shape: [usize; 4]) -> Result<Fp8Tensor, AttnError> {
    quantize_per_head_named("tensor", values, shape)
}

/// The element count of `shape`, checked against `values` (tensor `name`
/// in the errors: [`AttnError::TooLarge`] when the count overflows `usize`,
/// [`AttnError::BufferLength`] when `values` holds another number).
fn check_length(name: &str, values: &[f32], shape: [usize; 4]) -> Result<usize, AttnError> {
    let expected = shape
        .iter()
        .try_fold(1usize, |n, &x| n.checked_mul(x))
        .ok_or_else(|| AttnError::TooLarge(format!("{name} shape {shape:?} has more elements than usize holds")))?;
    if values.len() != expected {
        return Err(AttnError::BufferLength { tensor: name.to_string(), expected, actual: values.len() });
    }
    Ok(expected)
}

/// [`quantize_per_head`] with the tensor's name (e.g. "q") used in errors.
///
/// # Errors
/// As [`quantize_per_head`].
pub fn quantize_per_head_named(name: &str, values: &[f32], shape: [usize; 4]) -> Result<Fp8Tensor, AttnError> {
    let expected = check_length(name, values, shape)?;
    let [_, heads, seq, dim] = shape;
    let head_len = seq * dim;
    if expected == 0 {
        return Ok(Fp8Tensor { data: Vec::new(), shape, scales: vec![1.0; heads] });
    }
    // Each (batch, head)'s amax, or its first non-finite value, in
    // parallel; then per head, in head-major order as the error reports.
    let pieces = in_parallel(values.chunks(head_len).collect(), |piece| {
        piece.iter().try_fold(0.0f32, |amax, &x| if x.is_finite() { Ok(amax.max(x.abs())) } else { Err(x) })
    });
    let mut scales = Vec::with_capacity(heads);
    for h in 0..heads {
        let mut amax = 0.0f32;
        for (b, piece) in pieces.iter().skip(h).step_by(heads).enumerate() {
            match *piece {
                Ok(piece_amax) => amax = amax.max(piece_amax),
                Err(x) => {
                    let first = values[(b * heads + h) * head_len..][..head_len].iter().position(|v| !v.is_finite());
                    let at = first.unwrap_or(0);
                    let (s, d) = (at / dim.max(1), at % dim.max(1));
                    return Err(AttnError::InvalidScale {
                        what: format!("{name} scale of head {h} (amax / 448; element [{b}, {h}, {s}, {d}] is {x})"),
                        value: x.abs() / kernels_gpu::fp8::E4M3_MAX,
                    });
                }
            }
        }
        let scale = if amax == 0.0 { 1.0 } else { amax / kernels_gpu::fp8::E4M3_MAX };
        if scale == 0.0 {
            return Err(AttnError::InvalidScale {
                what: format!("{name} scale of head {h} (amax / 448 with amax = {amax:e})"),
                value: scale,
            });
        }
        scales.push(scale);
    }

    let mut data = vec![0u8; expected];
    let jobs: Vec<_> = data.chunks_mut(head_len).zip(values.chunks(head_len)).enumerate().collect();
    in_parallel(jobs, |(piece, (codes, values))| {
        let inv = scales[piece % heads] as f64;
        for (code, &x) in codes.iter_mut().zip(values) {
            // |scaled| <= 448 up to rounding; clamp so that rounding can
            // never reach the saturation path's edge.
            *code = encode_e4m3((x as f64 / inv).clamp(-E4M3_MAX, E4M3_MAX));
        }
    });
    Ok(Fp8Tensor { data, shape, scales })
}

/// `work` on each job, on as many threads as the machine has, the results
/// in the jobs' order.
fn in_parallel<J: Send, R: Send>(jobs: Vec<J>, work: impl Fn(J) -> R + Sync) -> Vec<R> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(jobs.len()).max(1);
    let per_thread = jobs.len().div_ceil(threads);
    let mut batches: Vec<Vec<J>> = Vec::with_capacity(threads);
    let mut jobs = jobs.into_iter().peekable();
    while jobs.peek().is_some() {
        batches.push(jobs.by_ref().take(per_thread).collect());
    }
    let work = &work;
    std::thread::scope(|scope| {
        let handles: Vec<_> = batches
            .into_iter()
            .map(|batch| scope.spawn(move || batch.into_iter().map(work).collect::<Vec<R>>()))
            .collect();
        handles.into_iter().flat_map(|h| h.join().expect("a worker thread panicked")).collect()
    })
}

/// Wraps existing E4M3 codes and per-head scales as a tensor, unchecked
/// (the library validates lengths and scales before it uses a tensor).
pub fn from_codes(data: Vec<u8>, shape: [usize; 4], scales: Vec<f32>) -> Fp8Tensor {
    Fp8Tensor { data, shape, scales }
}

/// SplitMix64 (Steele, Lea, Flood 2014): a tiny, fast, deterministic 64-bit
/// generator; good enough for test inputs and row sampling, and stable across
/// crate versions (unlike `rand`).
#[derive(Clone, Debug)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// A generator seeded with `seed`.
    pub fn new(seed: u64) -> Self {
        Self { state: seed }
    }

    /// The generator `draws` calls of [`SplitMix64::next_u64`] ahead: the
    /// state advances by one constant a draw, so one stream can be cut into
    /// pieces drawn apart that give the values it gives whole.
    pub fn skip(mut self, draws: u64) -> Self {
        self.state = self.state.wrapping_add(draws.wrapping_mul(Self::GAMMA));
        self
    }

    /// What the state advances by each draw (the golden ratio's bits).
    const GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(Self::GAMMA);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, 1)`, 53 random bits.
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform in `0..n` (`n > 0`), by Lemire's multiply-shift (bias below
    /// 2^-64 * n, irrelevant here).
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }

    /// A pair of independent standard normal values (Box–Muller).
    pub fn next_normal_pair(&mut self) -> (f64, f64) {
        // u1 in (0, 1] so that ln(u1) is finite.
        let u1 = 1.0 - self.next_f64();
        let u2 = self.next_f64();
        let r = (-2.0 * u1.ln()).sqrt();
        let theta = std::f64::consts::TAU * u2;
        (r * theta.cos(), r * theta.sin())
    }
}

/// `n` standard normal values drawn from `rng`, with FlashAttention-3's
/// outliers (`+ N(0, 100)` with probability 0.001) when `outliers`: the
/// distribution FP8 accuracy is measured on end to end.
pub fn normal_values(n: usize, outliers: bool, rng: &mut SplitMix64) -> Vec<f32> {
    (0..n)
        .map(|_| {
            let mut x = rng.next_normal_pair().0;
            if outliers && rng.next_f64() < 0.001 {
                x += 10.0 * rng.next_normal_pair().0;
            }
            x as f32
        })
        .collect()
}

/// `B*H*S*D` deterministic standard normal values (SplitMix64 seeded with
/// `seed`, Box–Muller), row-major for `shape`. The same seed gives the same
/// values on every machine.
pub fn random_normal(shape: [usize; 4], seed: u64) -> Vec<f32> {
    let n: usize = shape.iter().product();
    let threads = std::thread::available_parallelism().map_or(1, |t| t.get());
    normal_in_pieces(n, seed, n.div_ceil(threads).max(1 << 16))
}

/// `n` values of the standard normal stream of `seed` drawn in pieces of
/// `piece` values (rounded up to whole pairs, two draws each), each from
/// its place in the stream (`SplitMix64::skip`) on its own thread: the
/// same values as one thread drawing them all.
fn normal_in_pieces(n: usize, seed: u64, piece: usize) -> Vec<f32> {
    let piece = piece.max(1).next_multiple_of(2);
    let mut out = vec![0f32; n];
    let jobs: Vec<_> = out.chunks_mut(piece).enumerate().collect();
    in_parallel(jobs, |(i, values)| {
        let mut rng = SplitMix64::new(seed).skip((i * piece) as u64);
        for pair in values.chunks_mut(2) {
            let (a, b) = rng.next_normal_pair();
            pair[0] = a as f32;
            if let Some(second) = pair.get_mut(1) {
                *second = b as f32;
            }
        }
    });
    out
}

/// The seed of stream `stream` (0 = q, 1 = k, 2 = v) derived from `seed`, so
/// that the three tensors are independent and distinct even when their
/// shapes are equal.
fn stream_seed(seed: u64, stream: u64) -> u64 {
    SplitMix64::new(seed ^ stream.wrapping_add(1).wrapping_mul(0xD1B5_4A32_D192_ED03)).next_u64()
}

/// A random attention problem as in the seeds: Q `q_shape`, K and V
/// `kv_shape`, standard normal, quantized per head by amax. Deterministic
/// in `seed`; q, k and v come from distinct streams, drawn side by side,
/// each on every core (a decode cache of 2^28 values takes seconds a
/// tensor on one).
///
/// # Panics
/// When a shape's element count overflows `usize` (it could not be
/// allocated anyway).
pub fn random_problem(q_shape: [usize; 4], kv_shape: [usize; 4], seed: u64) -> (Fp8Tensor, Fp8Tensor, Fp8Tensor) {
    let make = |name: &str, shape: [usize; 4], stream: u64| {
        let values = random_normal(shape, stream_seed(seed, stream));
        quantize_per_head_named(name, &values, shape).expect("finite values of the right length always quantize")
    };
    std::thread::scope(|scope| {
        let k = scope.spawn(|| make("k", kv_shape, 1));
        let v = scope.spawn(|| make("v", kv_shape, 2));
        let q = make("q", q_shape, 0);
        let join = |t: std::thread::ScopedJoinHandle<'_, Fp8Tensor>| t.join().expect("drawing a tensor panicked");
        (q, join(k), join(v))
    })
}

/// Whether the quantizer rotates each row before it quantizes it (the
/// kernels' policy, re-exported): see `kernels_gpu::quantize::Rotation`.
pub use kernels_gpu::quantize::Rotation;

/// Which elements share one dequantization scale.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScaleGroup {
    /// One scale per head, over every batch (`scales[h]`), as the attention
    /// kernels take them.
    PerHead,
    /// One scale per (batch, head) (`scales[b * H + h]`).
    PerBatchHead,
}

/// The butterflies of the Walsh–Hadamard transform of one row, in place,
/// unnormalised: spans 1, 2, 4, ..., `len / 2`, each replacing the pair
/// `(a, b)` at `(i, i + span)` by `(a + b, a - b)`. `row.len()` must be a
/// power of two. [`hadamard_row`] is it in f32 then normalised.
pub fn hadamard_butterflies<T: Copy + std::ops::Add<Output = T> + std::ops::Sub<Output = T>>(row: &mut [T]) {
    let dim = row.len();
    let mut span = 1;
    while span < dim {
        for start in (0..dim).step_by(2 * span) {
            for i in start..start + span {
                let (a, b) = (row[i], row[i + span]);
                row[i] = a + b;
                row[i + span] = a - b;
            }
        }
        span *= 2;
    }
}

/// The normalised Walsh–Hadamard transform of one row, in place, in f32,
/// exactly as the GPU quantizer computes it: butterflies of span 1, 2, 4,
/// ..., `D/2` (each replaces the pair `(a, b)` at `(i, i + span)` by
/// `(a + b, a - b)`), then every element times the f32 nearest to
/// `1 / sqrt(D)`. `row.len()` must be a power of two (64 and 128 here).
pub fn hadamard_row(row: &mut [f32]) {
    let dim = row.len();
    debug_assert!(dim.is_power_of_two(), "hadamard_row: D = {dim} is not a power of two");
    hadamard_butterflies(row);
    let norm = hadamard_norm(dim);
    for x in row.iter_mut() {
        *x *= norm;
    }
}

/// The f32 nearest to `1 / sqrt(dim)`: the normalisation of
/// [`hadamard_row`] (exact for even powers of two, e.g. `1/8` at `D = 64`).
pub fn hadamard_norm(dim: usize) -> f32 {
    (1.0 / (dim as f64).sqrt()) as f32
}

/// The dequantization scale of a group whose largest magnitude is `amax`:
/// `amax / 448` in f32, or 1.0 for an all-zero group (as the GPU quantizer).
pub fn scale_of_amax(amax: f32) -> f32 {
    if amax == 0.0 { 1.0 } else { amax / kernels_gpu::fp8::E4M3_MAX }
}

/// The scales the GPU quantizer gives `values` (row-major `[B, H, S, D]`):
/// each row rotated first if `rotation` says so ([`hadamard_row`]), one
/// scale per `group`, [`scale_of_amax`] of the group's largest rotated
/// magnitude (`H` scales per head, `B * H` per (batch, head), indexed
/// `b * H + h`). With them, the rotated values.
///
/// # Errors
/// [`AttnError::BufferLength`] when `values.len()` does not match `shape`;
/// [`AttnError::InvalidScale`] when a group holds a non-finite (rotated)
/// value or its `amax / 448` underflows to zero; [`AttnError::TooLarge`]
/// when the element count overflows `usize`.
pub fn scales_as_gpu(
    name: &str,
    values: &[f32],
    shape: [usize; 4],
    rotation: Rotation,
    group: ScaleGroup,
) -> Result<(Vec<f32>, Vec<f32>), AttnError> {
    let expected = check_length(name, values, shape)?;
    let [batch, heads, _, dim] = shape;
    let mut rotated = values.to_vec();
    if rotation == Rotation::Hadamard && dim > 0 {
        rotated.chunks_exact_mut(dim).for_each(hadamard_row);
    }
    let slice_len = (expected / (batch * heads).max(1)).max(1);
    let (groups, what) = match group {
        ScaleGroup::PerHead => (heads, "head"),
        ScaleGroup::PerBatchHead => (batch * heads, "(batch, head)"),
    };
    let mut amax = vec![0.0f32; groups];
    for (slice, chunk) in rotated.chunks(slice_len).enumerate() {
        let g = group_of(group, heads, slice);
        for &x in chunk {
            if !x.is_finite() {
                return Err(AttnError::InvalidScale {
                    what: format!("{name} scale of {what} {g} (a rotated value is {x})"),
                    value: x.abs(),
                });
            }
            amax[g] = amax[g].max(x.abs());
        }
    }
    let scales: Vec<f32> = amax.iter().map(|&a| scale_of_amax(a)).collect();
    for (g, (&scale, &a)) in scales.iter().zip(&amax).enumerate() {
        if scale == 0.0 {
            return Err(AttnError::InvalidScale {
                what: format!("{name} scale of {what} {g} (amax / 448 with amax = {a:e})"),
                value: scale,
            });
        }
    }
    Ok((scales, rotated))
}

/// The scale group of slice `(b, h)` (`slice = b * heads + h`).
fn group_of(group: ScaleGroup, heads: usize, slice: usize) -> usize {
    match group {
        ScaleGroup::PerHead => slice % heads,
        ScaleGroup::PerBatchHead => slice,
    }
}

/// Quantizes `values` (row-major `[B, H, S, D]`) to E4M3 exactly as the GPU
/// quantizer does: the scales of [`scales_as_gpu`], and each code the E4M3
/// value nearest to the f32 product `x * (1 / scale)` of the rotated value
/// (the reciprocal an f32 division; ties to even, saturating at ±448).
/// Returns the codes and the scales.
///
/// # Errors
/// As [`scales_as_gpu`].
pub fn quantize_as_gpu(
    name: &str,
    values: &[f32],
    shape: [usize; 4],
    rotation: Rotation,
    group: ScaleGroup,
) -> Result<(Vec<u8>, Vec<f32>), AttnError> {
    let (scales, rotated) = scales_as_gpu(name, values, shape, rotation, group)?;
    let [batch, heads, ..] = shape;
    let slice_len = (rotated.len() / (batch * heads).max(1)).max(1);
    let mut codes = vec![0u8; rotated.len()];
    for (slice, (chunk, out)) in rotated.chunks(slice_len).zip(codes.chunks_mut(slice_len)).enumerate() {
        let inverse = 1.0 / scales[group_of(group, heads, slice)];
        for (c, &x) in out.iter_mut().zip(chunk) {
            *c = encode_e4m3((x * inverse) as f64);
        }
    }
    Ok((codes, scales))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normal_values_drawn_in_pieces_are_the_stream_drawn_whole() {
        let whole = |n: usize, seed: u64| {
            let mut rng = SplitMix64::new(seed);
            let mut out = Vec::new();
            while out.len() < n {
                let (a, b) = rng.next_normal_pair();
                out.extend([a as f32, b as f32]);
            }
            out.truncate(n);
            out
        };
        for (n, piece) in [(11, 1), (11, 2), (101, 6), (101, 100), (7, 1000), (0, 4)] {
            assert_eq!(normal_in_pieces(n, 5, piece), whole(n, 5), "{n} values in pieces of {piece}");
        }
        assert_eq!(random_normal([3, 1, 7, 11], 9), whole(231, 9));
    }
}
