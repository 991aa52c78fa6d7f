//! The quantizer's two passes on the GPU (see the module docs of
//! [`super`]), generic over the input type and the row rotation, and their
//! PTX entry points, one per row of [`super::QUANTIZE_KERNELS`].

use super::{LANE_ELEMENTS, QuantizeParams, ROWS_PER_BLOCK, THREADS, hadamard_norm};
use crate::arch::cvt::pack_e4m3x4;
use crate::arch::quant::{f16x2_to_f32x2, red_max_u32};
use crate::arch::shfl::shfl_xor_f32;
use crate::arch::sreg::{block_idx, lane_id, thread_idx_x, warp_id};
use crate::fp8::E4M3_MAX;

/// Eight bytes read in one access.
#[repr(C, align(8))]
struct Bytes8([u32; 2]);

/// Sixteen bytes read in one access.
#[repr(C, align(16))]
struct Bytes16([u32; 4]);

/// An input element type: how a lane reads its four consecutive values.
trait Input {
    /// Reads the four values at element index `at` of the tensor at
    /// `input`, widened to f32 exactly.
    ///
    /// # Safety
    /// The four elements lie inside a live global allocation, and `at` is a
    /// multiple of four (the base is 16-byte aligned).
    unsafe fn load(input: u64, at: usize) -> [f32; 4];
}

/// IEEE half precision input.
struct F16In;

impl Input for F16In {
    unsafe fn load(input: u64, at: usize) -> [f32; 4] {
        // SAFETY: the caller's contract; 8 bytes at an 8-byte aligned address.
        let Bytes8([a, b]) = unsafe { core::ptr::read((input as *const u16).add(at).cast::<Bytes8>()) };
        let ([x0, x1], [x2, x3]) = (f16x2_to_f32x2(a), f16x2_to_f32x2(b));
        [x0, x1, x2, x3]
    }
}

/// bfloat16 input (the upper half of an f32: widening is a shift).
struct Bf16In;

impl Input for Bf16In {
    unsafe fn load(input: u64, at: usize) -> [f32; 4] {
        // SAFETY: the caller's contract; 8 bytes at an 8-byte aligned address.
        let Bytes8([a, b]) = unsafe { core::ptr::read((input as *const u16).add(at).cast::<Bytes8>()) };
        [
            f32::from_bits(a << 16),
            f32::from_bits(a & 0xFFFF_0000),
            f32::from_bits(b << 16),
            f32::from_bits(b & 0xFFFF_0000),
        ]
    }
}

/// IEEE single precision input.
struct F32In;

impl Input for F32In {
    unsafe fn load(input: u64, at: usize) -> [f32; 4] {
        // SAFETY: the caller's contract; 16 bytes at a 16-byte aligned address.
        let Bytes16(w) = unsafe { core::ptr::read((input as *const f32).add(at).cast::<Bytes16>()) };
        w.map(f32::from_bits)
    }
}

/// What happens to a row before it is quantized (`super::Rotation`).
trait RowRotation {
    /// Rotates the row of `HEAD_DIM` values that the `HEAD_DIM / 4` lanes
    /// of this lane's row group hold, four consecutive values each.
    ///
    /// # Safety
    /// All 32 lanes of the warp call it together.
    unsafe fn rotate<const HEAD_DIM: u32>(x: &mut [f32; 4]);
}

/// No rotation.
struct Plain;

impl RowRotation for Plain {
    unsafe fn rotate<const HEAD_DIM: u32>(_: &mut [f32; 4]) {}
}

/// The normalised Walsh–Hadamard transform, butterflies in the order
/// `super::Rotation::Hadamard` states: spans 1 and 2 within the lane, then
/// spans 4, 8, ... across lanes `lane ^ 1, lane ^ 2, ...` (the lane whose
/// mask bit is set holds the pair's upper element: it keeps `a - b`).
struct Hadamard;

impl RowRotation for Hadamard {
    unsafe fn rotate<const HEAD_DIM: u32>(x: &mut [f32; 4]) {
        let [a, b, c, d] = *x;
        let [a, b, c, d] = [a + b, a - b, c + d, c - d];
        *x = [a + c, b + d, a - c, b - d];
        let lane = lane_id();
        let mut mask = 1;
        while mask < HEAD_DIM / LANE_ELEMENTS {
            let upper = lane & mask != 0;
            for v in x.iter_mut() {
                // SAFETY: the whole warp runs this loop (the caller's contract).
                let other = unsafe { shfl_xor_f32(*v, mask) };
                *v = if upper { other - *v } else { *v + other };
            }
            mask *= 2;
        }
        let norm = hadamard_norm(HEAD_DIM);
        for v in x.iter_mut() {
            *v *= norm;
        }
    }
}

/// Where one lane's four values of one step lie.
struct LaneRow {
    /// Whether the row exists (the block's last rows may lie past `S`).
    valid: bool,
    /// Element index of the first of the four values.
    at: usize,
}

/// The rows of this block, one [`LaneRow`] per step of this lane: a warp
/// covers `32 / (HEAD_DIM / 4)` consecutive rows per step.
struct Rows {
    /// The first element of this block's slice `(b, h)`.
    slice_base: usize,
    /// This lane's first row (within the slice) and column.
    first_row: u32,
    column: u32,
    /// `S`.
    seq: u32,
}

impl Rows {
    /// Rows per warp per step at `HEAD_DIM`.
    const fn per_step(head_dim: u32) -> u32 {
        32 * LANE_ELEMENTS / head_dim
    }

    /// Steps of one warp: the block's rows shared among its warps.
    const fn steps(head_dim: u32) -> u32 {
        ROWS_PER_BLOCK / (THREADS / 32) / Self::per_step(head_dim)
    }

    /// This lane's rows in the block `(x, h, b)` of `p`.
    fn new<const HEAD_DIM: u32>(p: &QuantizeParams, x: u32, h: u32, b: u32) -> Rows {
        let lanes_per_row = HEAD_DIM / LANE_ELEMENTS;
        let lane = lane_id();
        let warp_rows = Self::steps(HEAD_DIM) * Self::per_step(HEAD_DIM);
        Rows {
            slice_base: (b as usize * p.heads as usize + h as usize) * p.seq as usize * HEAD_DIM as usize,
            first_row: x * ROWS_PER_BLOCK + warp_id() * warp_rows + lane / lanes_per_row,
            column: lane % lanes_per_row * LANE_ELEMENTS,
            seq: p.seq,
        }
    }

    /// Where this lane's values of step `step` lie.
    fn at<const HEAD_DIM: u32>(&self, step: u32) -> LaneRow {
        let row = self.first_row + step * Self::per_step(HEAD_DIM);
        LaneRow { valid: row < self.seq, at: self.slice_base + row as usize * HEAD_DIM as usize + self.column as usize }
    }
}

/// The four values of `lane_row`, rotated (zeros for a row past `S`, which
/// the rotation keeps zero).
///
/// # Safety
/// The whole warp calls it together; `p.input` holds the tensor `p`
/// describes.
#[inline(always)]
unsafe fn rotated<I: Input, R: RowRotation, const HEAD_DIM: u32>(p: &QuantizeParams, lane_row: &LaneRow) -> [f32; 4] {
    // SAFETY: a valid row lies inside the tensor; `at` is a multiple of 4.
    let mut x = if lane_row.valid { unsafe { I::load(p.input, lane_row.at) } } else { [0.0; 4] };
    // SAFETY: the whole warp is here (the caller's contract).
    unsafe { R::rotate::<HEAD_DIM>(&mut x) };
    x
}

/// The scale group of block `(_, h, b)`.
fn group(p: &QuantizeParams, h: u32, b: u32) -> usize {
    b as usize * p.group_batch_stride as usize + h as usize
}

/// [`super::Pass::Amax`]: folds this block's largest rotated magnitude (as
/// f32 bits) into `amax[group]`.
///
/// # Safety
/// Launched with [`super::grid`] and [`THREADS`] threads on parameters whose
/// addresses hold the tensors and groups they describe.
#[inline(always)]
unsafe fn amax<I: Input, R: RowRotation, const HEAD_DIM: u32>(p: &QuantizeParams) {
    let (x, h, b) = block_idx();
    let rows = Rows::new::<HEAD_DIM>(p, x, h, b);
    let mut largest = 0u32;
    for step in 0..Rows::steps(HEAD_DIM) {
        // SAFETY: every lane of the warp runs every step (the launch contract).
        let values = unsafe { rotated::<I, R, HEAD_DIM>(p, &rows.at::<HEAD_DIM>(step)) };
        largest = values.iter().fold(largest, |m, v| m.max(v.to_bits() & 0x7FFF_FFFF));
    }
    let mut mask = 16;
    while mask > 0 {
        // SAFETY: the whole warp is here; the shuffle moves the bits unchanged.
        let other = unsafe { shfl_xor_f32(f32::from_bits(largest), mask) }.to_bits();
        largest = largest.max(other);
        mask /= 2;
    }
    if lane_id() == 0 {
        // SAFETY: `amax` holds one u32 per group (the launch contract).
        unsafe { red_max_u32((p.amax as *mut u32).add(group(p, h, b)), largest) };
    }
}

/// [`super::Pass::Encode`]: the codes of this block's rows and, from the
/// first block of each slice, the group's scale (the blocks of one group
/// write the same value).
///
/// # Safety
/// As [`amax`], launched after it on the same parameters.
#[inline(always)]
unsafe fn encode<I: Input, R: RowRotation, const HEAD_DIM: u32>(p: &QuantizeParams) {
    let (x, h, b) = block_idx();
    let group = group(p, h, b);
    // SAFETY: `amax` holds one u32 per group, complete since the amax pass.
    let amax = f32::from_bits(unsafe { core::ptr::read((p.amax as *const u32).add(group)) });
    let scale = if amax == 0.0 { 1.0 } else { amax / E4M3_MAX };
    // One division per thread; each value then takes a multiplication.
    let inverse = 1.0 / scale;
    let rows = Rows::new::<HEAD_DIM>(p, x, h, b);
    for step in 0..Rows::steps(HEAD_DIM) {
        let lane_row = rows.at::<HEAD_DIM>(step);
        // SAFETY: every lane of the warp runs every step (the launch contract).
        let values = unsafe { rotated::<I, R, HEAD_DIM>(p, &lane_row) };
        let codes = pack_e4m3x4(values.map(|v| v * inverse));
        if lane_row.valid {
            // SAFETY: the row lies inside `codes`; `at` is a multiple of 4.
            unsafe { core::ptr::write((p.codes as *mut u8).add(lane_row.at).cast::<u32>(), codes) };
        }
    }
    if x == 0 && thread_idx_x() == 0 {
        // SAFETY: `scales` holds one f32 per group (the launch contract).
        unsafe { core::ptr::write((p.scales as *mut f32).add(group), scale) };
    }
}

/// Emits the two entries (amax, encode) of each configuration.
macro_rules! quantize_entries {
    ($($amax:ident, $encode:ident: $input:ty, $head_dim:literal, $rotation:ty;)*) => {$(
        /// PTX entry point of the quantizer's amax pass (see `quantize::QUANTIZE_KERNELS`).
        ///
        /// # Safety
        /// Launched by the host with validated parameters and `quantize::grid`.
        #[unsafe(no_mangle)]
        pub unsafe extern "ptx-kernel" fn $amax(p: QuantizeParams) {
            // SAFETY: forwarded launch contract.
            unsafe { amax::<$input, $rotation, $head_dim>(&p) }
        }

        /// PTX entry point of the quantizer's encode pass (see `quantize::QUANTIZE_KERNELS`).
        ///
        /// # Safety
        /// Launched by the host after the amax pass, on the same parameters.
        #[unsafe(no_mangle)]
        pub unsafe extern "ptx-kernel" fn $encode(p: QuantizeParams) {
            // SAFETY: forwarded launch contract.
            unsafe { encode::<$input, $rotation, $head_dim>(&p) }
        }
    )*};
}

quantize_entries! {
    sdpa_quantize_amax_f16_d64, sdpa_quantize_encode_f16_d64: F16In, 64, Plain;
    sdpa_quantize_amax_f16_d64_hadamard, sdpa_quantize_encode_f16_d64_hadamard: F16In, 64, Hadamard;
    sdpa_quantize_amax_f16_d128, sdpa_quantize_encode_f16_d128: F16In, 128, Plain;
    sdpa_quantize_amax_f16_d128_hadamard, sdpa_quantize_encode_f16_d128_hadamard: F16In, 128, Hadamard;
    sdpa_quantize_amax_bf16_d64, sdpa_quantize_encode_bf16_d64: Bf16In, 64, Plain;
    sdpa_quantize_amax_bf16_d64_hadamard, sdpa_quantize_encode_bf16_d64_hadamard: Bf16In, 64, Hadamard;
    sdpa_quantize_amax_bf16_d128, sdpa_quantize_encode_bf16_d128: Bf16In, 128, Plain;
    sdpa_quantize_amax_bf16_d128_hadamard, sdpa_quantize_encode_bf16_d128_hadamard: Bf16In, 128, Hadamard;
    sdpa_quantize_amax_f32_d64, sdpa_quantize_encode_f32_d64: F32In, 64, Plain;
    sdpa_quantize_amax_f32_d64_hadamard, sdpa_quantize_encode_f32_d64_hadamard: F32In, 64, Hadamard;
    sdpa_quantize_amax_f32_d128, sdpa_quantize_encode_f32_d128: F32In, 128, Plain;
    sdpa_quantize_amax_f32_d128_hadamard, sdpa_quantize_encode_f32_d128_hadamard: F32In, 128, Hadamard;
}
