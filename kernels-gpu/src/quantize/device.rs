//! The quantizer's kernel on the GPU (see the module docs of [`super`]):
//! generic over the input type, each tensor's rotation chosen per tile; its
//! PTX entry points, one per row of [`super::QUANTIZE_KERNELS`].

use super::{
    LANE_VALUES, QuantizeParams, QuantizeTensor, ROTATION_HADAMARD, TILE_STEPS, WARPS, Work, hadamard_norm, schedule,
};
use crate::arch::cvt::pack_e4m3x4;
use crate::arch::quant::{
    count_acq_rel_u32, f16x2_to_f32x2, load_acquire_u32, load_relaxed_u32, nanosleep, opaque_u32, opaque_u64,
    red_add_release_u32, red_max_u32, store_relaxed_u32, ticket_u32,
};
use crate::arch::shfl::{broadcast_lane0_u32, shfl_xor_f32};
use crate::arch::sreg::{block_idx_x, lane_id, warp_id};
use crate::fp8::E4M3_MAX;

/// The values one lane holds: [`LANE_VALUES`] of one row.
type LaneValues = [f32; LANE_VALUES as usize];

/// Eight bytes written in one access.
#[repr(C, align(8))]
struct Bytes8([u32; 2]);

/// Sixteen bytes read in one access.
#[repr(C, align(16))]
struct Bytes16([u32; 4]);

/// Reads the 16 bytes at element `at` of a tensor of `ELEMENT_BYTES`-byte
/// elements at `base`.
///
/// # Safety
/// The 16 bytes lie inside a live global allocation; `base` is 16-byte
/// aligned and `at * ELEMENT_BYTES` a multiple of 16.
#[inline(always)]
unsafe fn load16<const ELEMENT_BYTES: usize>(base: u64, at: usize) -> [u32; 4] {
    // SAFETY: the caller's contract.
    let Bytes16(words) = unsafe { core::ptr::read((base as *const u8).add(at * ELEMENT_BYTES).cast::<Bytes16>()) };
    words
}

/// An input element type: how a lane reads its values, one 16-byte chunk
/// at a time, and widens them to f32.
trait Input {
    /// Elements in one 16-byte chunk.
    const CHUNK: u32;

    /// Steps whose loads a lane has in flight at once ([`each_step`]): 4
    /// or 2 (see [`PAIR_STEPS_IN_FLIGHT`]).
    const STEPS_IN_FLIGHT: u32;

    /// The lane's chunks as read (zeros: a row past `S`, whose values are
    /// zeros).
    type Raw: Copy + Default;

    /// Reads the lane's chunks: chunk `j` (of `LANE_VALUES / CHUNK`) from
    /// element `at + j * chunk_stride`.
    ///
    /// # Safety
    /// Every chunk lies inside a live global allocation at a 16-byte aligned
    /// address.
    unsafe fn load_raw(input: u64, at: usize, chunk_stride: usize) -> Self::Raw;

    /// The chunks' values, chunk `j` into values `j * CHUNK ..`, widened to
    /// f32 exactly.
    fn widen(raw: Self::Raw) -> LaneValues;
}

/// Reads `N` chunks of `ELEMENT_BYTES`-byte elements, chunk `j` at element
/// `at + j * chunk_stride`.
///
/// # Safety
/// As [`Input::load_raw`].
#[inline(always)]
unsafe fn load_chunks<const N: usize, const ELEMENT_BYTES: usize>(
    input: u64,
    at: usize,
    chunk_stride: usize,
) -> [[u32; 4]; N] {
    let mut raw = [[0; 4]; N];
    for (j, chunk) in raw.iter_mut().enumerate() {
        // SAFETY: the caller's contract.
        *chunk = unsafe { load16::<ELEMENT_BYTES>(input, at + j * chunk_stride) };
    }
    raw
}

/// Widens the four chunks of a two-byte element type, `widen` turning each
/// 32-bit word (two elements, the first in its low half) into two f32.
#[inline(always)]
fn widen_pairs(raw: [[u32; 4]; 4], widen: impl Fn(u32) -> [f32; 2]) -> LaneValues {
    let mut x = [0.0; LANE_VALUES as usize];
    for (j, words) in raw.iter().enumerate() {
        for (k, &w) in words.iter().enumerate() {
            let [lo, hi] = widen(w);
            x[8 * j + 2 * k] = lo;
            x[8 * j + 2 * k + 1] = hi;
        }
    }
    x
}

/// Steps in flight for a two-byte input (16 registers of chunks a step):
/// 4 on sm_90a; 2 in the sm_89 build, where 4 would leave an L4 room for
/// one block of [`super::THREADS`] threads, not the two it promises. An f32
/// input (32 registers a step) keeps 2 on either.
#[cfg(target_feature = "sm_90a")]
const PAIR_STEPS_IN_FLIGHT: u32 = 4;
/// See the sm_90a definition.
#[cfg(not(target_feature = "sm_90a"))]
const PAIR_STEPS_IN_FLIGHT: u32 = 2;

/// IEEE half precision input.
struct F16In;

impl Input for F16In {
    const CHUNK: u32 = 8;
    const STEPS_IN_FLIGHT: u32 = PAIR_STEPS_IN_FLIGHT;
    type Raw = [[u32; 4]; 4];

    unsafe fn load_raw(input: u64, at: usize, chunk_stride: usize) -> Self::Raw {
        // SAFETY: the caller's contract.
        unsafe { load_chunks::<4, 2>(input, at, chunk_stride) }
    }

    fn widen(raw: Self::Raw) -> LaneValues {
        widen_pairs(raw, f16x2_to_f32x2)
    }
}

/// bfloat16 input (the upper half of an f32: widening is a shift).
struct Bf16In;

impl Input for Bf16In {
    const CHUNK: u32 = 8;
    const STEPS_IN_FLIGHT: u32 = PAIR_STEPS_IN_FLIGHT;
    type Raw = [[u32; 4]; 4];

    unsafe fn load_raw(input: u64, at: usize, chunk_stride: usize) -> Self::Raw {
        // SAFETY: the caller's contract.
        unsafe { load_chunks::<4, 2>(input, at, chunk_stride) }
    }

    fn widen(raw: Self::Raw) -> LaneValues {
        widen_pairs(raw, |w| [f32::from_bits(w << 16), f32::from_bits(w & 0xFFFF_0000)])
    }
}

/// IEEE single precision input.
struct F32In;

impl Input for F32In {
    const CHUNK: u32 = 4;
    const STEPS_IN_FLIGHT: u32 = 2;
    type Raw = [[u32; 4]; 8];

    unsafe fn load_raw(input: u64, at: usize, chunk_stride: usize) -> Self::Raw {
        // SAFETY: the caller's contract.
        unsafe { load_chunks::<8, 4>(input, at, chunk_stride) }
    }

    fn widen(raw: Self::Raw) -> LaneValues {
        let mut x = [0.0; LANE_VALUES as usize];
        for (j, words) in raw.iter().enumerate() {
            for (k, &w) in words.iter().enumerate() {
                x[4 * j + k] = f32::from_bits(w);
            }
        }
        x
    }
}

/// What happens to a row before it is quantized (`super::Rotation`).
trait RowRotation {
    /// Rotates the row of `HEAD_DIM` values that the `HEAD_DIM / 32` lanes
    /// of this lane's row hold, in chunks of `I::CHUNK` (see
    /// [`LANE_VALUES`]).
    ///
    /// # Safety
    /// All 32 lanes of the warp call it together.
    unsafe fn rotate<I: Input, const HEAD_DIM: u32>(x: &mut LaneValues);
}

/// No rotation.
struct Plain;

impl RowRotation for Plain {
    unsafe fn rotate<I: Input, const HEAD_DIM: u32>(_: &mut LaneValues) {}
}

/// The normalised Walsh–Hadamard transform, butterflies of span 1, 2, 4,
/// ..., `HEAD_DIM / 2` in that order, as `super::Rotation::Hadamard` states.
/// Element `(j * lanes + l) * CHUNK + e` of the row is value `j * CHUNK + e`
/// of lane `l` of the row (`lanes = HEAD_DIM / 32`), so a span below `CHUNK`
/// pairs values of one chunk, a span of `CHUNK * lanes` and up pairs chunks
/// of one lane, and the spans between pair lanes `l` and `l ^ (span /
/// CHUNK)` (the lane whose mask bit is set holds the pair's upper element:
/// it keeps `a - b`, the lower one `a + b`).
struct Hadamard;

impl RowRotation for Hadamard {
    unsafe fn rotate<I: Input, const HEAD_DIM: u32>(x: &mut LaneValues) {
        let chunk = I::CHUNK;
        let lanes = HEAD_DIM / LANE_VALUES;
        let mut span = 1;
        while span < chunk {
            butterflies(x, span as usize);
            span *= 2;
        }
        let lane = lane_id();
        while span < chunk * lanes {
            let mask = span / chunk;
            let upper = lane & mask != 0;
            for v in x.iter_mut() {
                // SAFETY: the whole warp runs this loop (the caller's contract).
                let other = unsafe { shfl_xor_f32(*v, mask) };
                *v = if upper { other - *v } else { *v + other };
            }
            span *= 2;
        }
        while span < HEAD_DIM {
            // Span `span` of the row is span `span / lanes` of the lane's values.
            butterflies(x, (span / lanes) as usize);
            span *= 2;
        }
        let norm = hadamard_norm(HEAD_DIM);
        for v in x.iter_mut() {
            *v *= norm;
        }
    }
}

/// The butterflies of span `span` over the lane's values: `(a, b)` at
/// `(i, i + span)`, `i & span == 0`, becomes `(a + b, a - b)`.
#[inline(always)]
fn butterflies(x: &mut LaneValues, span: usize) {
    for i in 0..LANE_VALUES as usize {
        if i & span == 0 {
            let (a, b) = (x[i], x[i + span]);
            x[i] = a + b;
            x[i + span] = a - b;
        }
    }
}

/// One tile's place: the tensor, its unit, and where this lane's values lie.
struct Tile {
    /// The tensor the tile belongs to.
    tensor: QuantizeTensor,
    /// The unit (tensor x scale group) index into the scratch words.
    unit: usize,
    /// The scale group within the tensor.
    group: usize,
    /// The tile's index within its unit (0: the unit's first).
    index_in_unit: u32,
    /// Element index of this lane's first chunk in the first step's row.
    first_at: usize,
    /// This lane's row (within the slice) at step 0.
    first_row: u32,
    /// Element index of the tile's first element (its rows are contiguous).
    tile_at: usize,
    /// The tile's first row within the slice.
    tile_row: u32,
}

impl Tile {
    /// Rows per warp per step at `HEAD_DIM`: 32 lanes over `HEAD_DIM / 32`
    /// lanes per row.
    const fn rows_per_step(head_dim: u32) -> u32 {
        32 * LANE_VALUES / head_dim
    }

    /// Tile `tile` (of one kind) of the launch `p`, as this lane sees it.
    fn new<I: Input, const HEAD_DIM: u32>(p: &QuantizeParams, tile: u32) -> Tile {
        let unit = tile / p.tiles_per_unit;
        let index_in_unit = tile % p.tiles_per_unit;
        let tensor_index = unit / p.groups;
        let group = unit % p.groups;
        let (b, h) = if p.group_batch_stride == 0 {
            (index_in_unit / p.row_tiles, group)
        } else {
            (group / p.heads, group % p.heads)
        };
        let row_tile = index_in_unit % p.row_tiles;
        let lanes_per_row = HEAD_DIM / LANE_VALUES;
        let lane = lane_id();
        let tile_row = row_tile * super::tile_rows(HEAD_DIM);
        let first_row = tile_row + lane / lanes_per_row;
        let slice_base = (b as usize * p.heads as usize + h as usize) * p.seq as usize * HEAD_DIM as usize;
        Tile {
            tensor: tensor_of(p, tensor_index),
            unit: unit as usize,
            group: group as usize,
            index_in_unit,
            first_at: slice_base + first_row as usize * HEAD_DIM as usize + (lane % lanes_per_row * I::CHUNK) as usize,
            first_row,
            tile_at: slice_base + tile_row as usize * HEAD_DIM as usize,
            tile_row,
        }
    }

    /// Whether this lane's row of step `step` exists (a slice's last tile
    /// may reach past `S`), and its first element.
    fn at<const HEAD_DIM: u32>(&self, p: &QuantizeParams, step: u32) -> (bool, usize) {
        let rows = step * Self::rows_per_step(HEAD_DIM);
        (self.first_row + rows < p.seq, self.first_at + rows as usize * HEAD_DIM as usize)
    }
}

/// Tensor `index` of `p`, chosen among the fields' values (see
/// [`opaque_u64`]: an index into the parameters would copy them to the
/// stack).
#[inline(always)]
fn tensor_of(p: &QuantizeParams, index: u32) -> QuantizeTensor {
    let [a, b, c] = p.tensors;
    let pick64 = |x: u64, y: u64, z: u64| {
        let (x, y, z) = (opaque_u64(x), opaque_u64(y), opaque_u64(z));
        if index == 0 {
            x
        } else if index == 1 {
            y
        } else {
            z
        }
    };
    let pick32 = |x: u32, y: u32, z: u32| {
        let (x, y, z) = (opaque_u32(x), opaque_u32(y), opaque_u32(z));
        if index == 0 {
            x
        } else if index == 1 {
            y
        } else {
            z
        }
    };
    QuantizeTensor {
        input: pick64(a.input, b.input, c.input),
        codes: pick64(a.codes, b.codes, c.codes),
        scales: pick64(a.scales, b.scales, c.scales),
        rotation: pick32(a.rotation, b.rotation, c.rotation),
        reserved: 0,
    }
}

/// Element distance between a lane's consecutive chunks of one row.
const fn chunk_stride(chunk: u32, head_dim: u32) -> usize {
    (chunk * (head_dim / LANE_VALUES)) as usize
}

/// This lane's chunks of step `step` of `tile` as read (zeros for a row
/// past `S`).
///
/// # Safety
/// The tile's tensor holds the shape `p` describes.
#[inline(always)]
unsafe fn step_chunks<I: Input, const HEAD_DIM: u32>(p: &QuantizeParams, tile: &Tile, step: u32) -> I::Raw {
    let (valid, at) = tile.at::<HEAD_DIM>(p, step);
    let stride = chunk_stride(I::CHUNK, HEAD_DIM);
    // SAFETY: a valid row lies inside the tensor; its chunks are 16-byte aligned.
    if valid { unsafe { I::load_raw(tile.tensor.input, at, stride) } } else { I::Raw::default() }
}

/// Calls `work(step, values)` for each step of `tile` in order, `values`
/// this lane's values of the step rotated by `R` (zeros for a row past `S`,
/// which the rotation keeps zero). The loads of [`Input::STEPS_IN_FLIGHT`]
/// steps are issued before the first of them is worked on (8 KiB of f16 a
/// warp), not one step at a time, since the warps an SM holds are too few
/// to cover the memory's latency with one step each.
///
/// # Safety
/// The whole warp calls it together; the tile's tensor holds the shape `p`
/// describes.
#[inline(always)]
unsafe fn each_step<I: Input, R: RowRotation, const HEAD_DIM: u32>(
    p: &QuantizeParams,
    tile: &Tile,
    mut work: impl FnMut(u32, LaneValues),
) {
    // The steps in flight written out one by one: as a loop, LLVM keeps
    // the loaded chunks in local memory.
    const _: () = assert!(TILE_STEPS % 4 == 0, "each_step takes 4 or 2 steps at a time");
    const { assert!(I::STEPS_IN_FLIGHT == 4 || I::STEPS_IN_FLIGHT == 2, "each_step writes out 4 or 2 steps") };
    // SAFETY: the caller's contract.
    let load = |step| unsafe { step_chunks::<I, HEAD_DIM>(p, tile, step) };
    let mut step_work = |step, chunks| {
        let mut x = I::widen(chunks);
        // SAFETY: the whole warp is here (the caller's contract).
        unsafe { R::rotate::<I, HEAD_DIM>(&mut x) };
        work(step, x);
    };
    let mut first = 0;
    while first < TILE_STEPS {
        if I::STEPS_IN_FLIGHT == 4 {
            let [r0, r1, r2, r3] = [load(first), load(first + 1), load(first + 2), load(first + 3)];
            step_work(first, r0);
            step_work(first + 1, r1);
            step_work(first + 2, r2);
            step_work(first + 3, r3);
        } else {
            let [r0, r1] = [load(first), load(first + 1)];
            step_work(first, r0);
            step_work(first + 1, r1);
        }
        first += I::STEPS_IN_FLIGHT;
    }
}

/// The largest of `value` over the warp, in every lane.
///
/// # Safety
/// The whole warp calls it together.
#[inline(always)]
unsafe fn warp_max(mut value: u32) -> u32 {
    let mut mask = 16;
    while mask > 0 {
        // SAFETY: the whole warp is here (the caller's contract).
        value = value.max(unsafe { shfl_xor_f32(f32::from_bits(value), mask) }.to_bits());
        mask /= 2;
    }
    value
}

/// The scratch words of unit `unit`: its `amax`, `amax_done` and
/// `encode_done` (see [`super::unit_words`]).
fn unit_words(p: &QuantizeParams, unit: usize) -> [*mut u32; 3] {
    let units = (p.tiles_per_pass / p.tiles_per_unit) as usize;
    let base = p.scratch as *mut u32;
    super::unit_words(units, unit).map(|i| base.wrapping_add(i))
}

/// An amax tile: folds the tile's largest rotated magnitude (as f32 bits)
/// into its unit's `amax`, then counts the tile in `amax_done`.
///
/// # Safety
/// The whole warp calls it; `p` holds the tensors and scratch it describes.
#[inline(always)]
unsafe fn amax_tile<I: Input, R: RowRotation, const HEAD_DIM: u32>(p: &QuantizeParams, tile: &Tile) {
    let mut largest = 0u32;
    // SAFETY: every lane of the warp runs every step (the caller's contract).
    unsafe {
        each_step::<I, R, HEAD_DIM>(p, tile, |_, values| {
            largest = values.iter().fold(largest, |m, v| m.max(v.to_bits() & 0x7FFF_FFFF));
        })
    };
    // SAFETY: the whole warp is here.
    let largest = unsafe { warp_max(largest) };
    if lane_id() == 0 {
        let [amax, amax_done, _] = unit_words(p, tile.unit);
        // SAFETY: the scratch words of the unit (the caller's contract); the
        // release orders the `max` before the count that publishes it.
        unsafe {
            red_max_u32(amax, largest);
            red_add_release_u32(amax_done, 1);
        }
    }
}

/// The unit's amax, once every amax tile of the unit has counted itself
/// (lane 0 polls, then reads it), in every lane; lane 0 then counts this
/// encode tile, and the unit's last one clears the unit's words for the
/// next launch.
///
/// # Safety
/// The whole warp calls it; every amax tile of the unit holds a smaller
/// ticket than this warp (so it is running or done).
#[inline(always)]
unsafe fn unit_amax(p: &QuantizeParams, tile: &Tile) -> f32 {
    let mut bits = 0;
    if lane_id() == 0 {
        let [amax, amax_done, encode_done] = unit_words(p, tile.unit);
        // SAFETY: the unit's scratch words (the caller's contract). The
        // acquire (in `wait_until`) orders the read of `amax` after every
        // tile's `max`; the acq_rel count orders that read before the last
        // tile's clearing.
        unsafe {
            wait_until(amax_done, p.tiles_per_unit);
            bits = load_relaxed_u32(amax);
            if count_acq_rel_u32(encode_done, p.tiles_per_unit - 1) == p.tiles_per_unit - 1 {
                store_relaxed_u32(amax, 0);
                store_relaxed_u32(amax_done, 0);
            }
        }
    }
    // SAFETY: the whole warp meets here.
    f32::from_bits(unsafe { broadcast_lane0_u32(bits) })
}

/// Writes the lane's codes of one row: chunk `j` of `values` (already
/// scaled) to element `at + j * chunk_stride` of `codes`.
///
/// # Safety
/// The row lies inside the codes tensor; `codes` is 8-byte aligned.
#[inline(always)]
unsafe fn store_codes<I: Input>(codes: u64, at: usize, chunk_stride: usize, values: &LaneValues) {
    let base = codes as *mut u8;
    let chunk = I::CHUNK as usize;
    for j in 0..LANE_VALUES as usize / chunk {
        let v = j * chunk;
        let low = pack_e4m3x4([values[v], values[v + 1], values[v + 2], values[v + 3]]);
        // SAFETY: the caller's contract; `at + j * chunk_stride` is a
        // multiple of the chunk, so the address is chunk-byte aligned.
        unsafe {
            let address = base.add(at + j * chunk_stride);
            if chunk == 8 {
                let high = pack_e4m3x4([values[v + 4], values[v + 5], values[v + 6], values[v + 7]]);
                core::ptr::write(address.cast::<Bytes8>(), Bytes8([low, high]));
            } else {
                core::ptr::write(address.cast::<u32>(), low);
            }
        }
    }
}

/// An encode tile: the codes of the tile's rows and, from the unit's first
/// tile, the group's scale.
///
/// # Safety
/// As [`unit_amax`].
#[inline(always)]
unsafe fn encode_tile<I: Input, R: RowRotation, const HEAD_DIM: u32>(p: &QuantizeParams, tile: &Tile) {
    // SAFETY: forwarded contract.
    let amax = unsafe { unit_amax(p, tile) };
    let scale = if amax == 0.0 { 1.0 } else { amax / E4M3_MAX };
    // One division per lane; each value then takes a multiplication.
    let inverse = 1.0 / scale;
    if tile.index_in_unit == 0 && lane_id() == 0 {
        // SAFETY: `scales` holds one f32 per group (the caller's contract).
        unsafe { core::ptr::write((tile.tensor.scales as *mut f32).add(tile.group), scale) };
    }
    let stride = chunk_stride(I::CHUNK, HEAD_DIM);
    // SAFETY: every lane of the warp runs every step (the caller's contract).
    unsafe {
        each_step::<I, R, HEAD_DIM>(p, tile, |step, values| {
            let (valid, at) = tile.at::<HEAD_DIM>(p, step);
            if valid {
                // SAFETY: a valid row lies inside the codes tensor.
                unsafe { store_codes::<I>(tile.tensor.codes, at, stride, &values.map(|v| v * inverse)) };
            }
        })
    };
}

/// Returns once `*count >= target`, with this thread's later reads ordered
/// after the releases that made it so (each poll acquires).
///
/// # Safety
/// `count` is a live scratch word that reaches `target`.
#[inline(always)]
unsafe fn wait_until(count: *const u32, target: u32) {
    // SAFETY: the caller's contract.
    while unsafe { load_acquire_u32(count) } < target {
        nanosleep(100);
    }
}

/// The next ticket of the counter in scratch word 0 (bounded by `bound`:
/// see [`ticket_u32`]), drawn by lane 0, in every lane.
///
/// # Safety
/// The whole warp calls it; `p.scratch` is the launch's scratch.
#[inline(always)]
unsafe fn warp_ticket(p: &QuantizeParams, bound: u32) -> u32 {
    let lane0_ticket = if lane_id() == 0 {
        // SAFETY: word 0 of the scratch (the caller's contract).
        unsafe { ticket_u32(p.scratch as *mut u32, bound) }
    } else {
        0
    };
    // SAFETY: the whole warp is here.
    unsafe { broadcast_lane0_u32(lane0_ticket) }
}

/// The work of `ticket`: the tile of the kind [`schedule`] gives it, with
/// its tensor's rotation.
///
/// # Safety
/// The whole warp calls it; every smaller ticket is held by a running warp
/// (see the module docs); `p` as [`quantize`] says.
#[inline(always)]
unsafe fn ticket_work<I: Input, const HEAD_DIM: u32>(p: &QuantizeParams, ticket: u32) {
    let work = schedule(ticket, p.tiles_per_pass, p.lag_tiles);
    let tile_index = match work {
        Work::Amax(t) | Work::Encode(t) => t,
    };
    let tile = Tile::new::<I, HEAD_DIM>(p, tile_index);
    let hadamard = tile.tensor.rotation == ROTATION_HADAMARD;
    // SAFETY: the whole warp takes each branch (the ticket and tile are
    // warp-uniform); the schedule puts an encode tile after its unit's
    // amax tiles.
    unsafe {
        match (work, hadamard) {
            (Work::Amax(_), false) => amax_tile::<I, Plain, HEAD_DIM>(p, &tile),
            (Work::Amax(_), true) => amax_tile::<I, Hadamard, HEAD_DIM>(p, &tile),
            (Work::Encode(_), false) => encode_tile::<I, Plain, HEAD_DIM>(p, &tile),
            (Work::Encode(_), true) => encode_tile::<I, Hadamard, HEAD_DIM>(p, &tile),
        }
    }
}

/// The kernel: one warp per ticket, each taking one and exiting (the last
/// block's extra warps exit at once).
///
/// # Safety
/// Launched on parameters the host derived from the shape
/// (`super::QuantizeParams`) with zeroed scratch words, in
/// [`super::blocks`]`(p.tiles_per_pass)` blocks of [`super::THREADS`]
/// threads.
#[inline(always)]
unsafe fn quantize<I: Input, const HEAD_DIM: u32>(p: &QuantizeParams) {
    let warps = 2 * p.tiles_per_pass;
    if block_idx_x() * WARPS + warp_id() >= warps {
        return;
    }
    // SAFETY: word 0 of the scratch is the ticket counter; exactly `warps`
    // warps get here, so it wraps back to zero after the last.
    let ticket = unsafe { warp_ticket(p, warps - 1) };
    // SAFETY: forwarded contract; the whole warp is here.
    unsafe { ticket_work::<I, HEAD_DIM>(p, ticket) }
}

/// Emits one entry per input type and head dim.
macro_rules! quantize_entries {
    ($($entry:ident: $input:ty, $head_dim:literal;)*) => {$(
        /// PTX entry point of the quantizer (see `quantize::QUANTIZE_KERNELS`).
        ///
        /// # Safety
        /// Launched by the host with validated parameters, the blocks
        /// `quantize::blocks` gives and zeroed scratch.
        #[unsafe(no_mangle)]
        pub unsafe extern "ptx-kernel" fn $entry(p: QuantizeParams) {
            // SAFETY: forwarded launch contract.
            unsafe { quantize::<$input, $head_dim>(&p) }
        }
    )*};
}

quantize_entries! {
    sdpa_quantize_f16_d64: F16In, 64;
    sdpa_quantize_f16_d128: F16In, 128;
    sdpa_quantize_bf16_d64: Bf16In, 64;
    sdpa_quantize_bf16_d128: Bf16In, 128;
    sdpa_quantize_f32_d64: F32In, 64;
    sdpa_quantize_f32_d128: F32In, 128;
}
