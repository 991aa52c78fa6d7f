//! The FP8 quantizer: float tensors `[B, H, S, D]` (f16, bf16 or f32) in,
//! E4M3 codes of the same shape and f32 dequantization scales out, each row
//! optionally rotated by the normalised Walsh–Hadamard matrix first.
//!
//! One kernel per input type and head dim quantizes up to [`MAX_TENSORS`]
//! tensors of one shape (Q, K and V) in one launch. Its work is a list of
//! *tiles* ([`tile_rows`] rows of one (batch, head) slice of one tensor),
//! each done twice by one warp, in two kinds:
//! - an **amax** tile folds the largest magnitude of its (rotated) values
//!   into its scale group's `amax` word, the f32's bits as a `u32` (for
//!   non-negative floats the bits order as the values, and a NaN sorts above
//!   every number, so one integer `max` both reduces and propagates NaN),
//!   then counts itself done in the group's `amax_done` word;
//! - an **encode** tile waits until every amax tile of its group is done,
//!   takes the scale `amax / 448` (1.0 for an all-zero group), writes each
//!   code as the E4M3 value nearest to `x * (1 / scale)` (both f32
//!   operations rounded to nearest; ties to even, saturating at ±448), and
//!   the group's scale from the group's first tile.
//!
//! A *unit* is one scale group of one tensor, [`QuantizeParams::tiles_per_unit`]
//! tiles. The launch has one warp per tile and kind ([`blocks`]); each warp
//! takes one ticket from a counter (tickets follow the order in which warps
//! ask) and does the work [`schedule`] gives it:
//! the amax tiles of the first `lag` units, then the encode tiles of unit
//! `u` interleaved with the amax tiles of unit `u + lag`. An encode tile's
//! group therefore finishes its amax a few megabytes of input earlier, so
//! its second read of the input hits L2; and an encode tile only ever waits
//! for tiles of smaller tickets, each held by a warp that already runs (so
//! the smallest unfinished ticket always progresses: the wait always ends).
//!
//! The scratch words (ticket, then `amax`, `amax_done`, `encode_done` per
//! unit: [`scratch_words`], [`unit_words`]) must be zero before
//! the first launch; each launch leaves them zero (the ticket counter wraps
//! to zero at its last ticket, and the last encode tile of a unit clears the
//! unit's words).
//!
//! A scale group is a head (`group = h`, over every batch) or a (batch,
//! head) (`group = b * H + h`): [`QuantizeParams::group_batch_stride`] is 0
//! or `H`.
//!
//! The host's `sdpa::quant::quantize_as_gpu` is the CPU reference of exactly
//! this arithmetic.

#[cfg(target_arch = "nvptx64")]
mod device;

/// Threads per block: 8 warps, each of which works on its own (blocks are
/// only containers; the kernel has no block barrier and no shared memory).
pub const THREADS: u32 = 256;

/// Steps of one tile: in each, the warp's lanes hold [`LANE_VALUES`] values
/// each, 1024 values of `1024 / D` rows.
pub const TILE_STEPS: u32 = 8;

/// Rows of one (batch, head) slice in one tile at head dim `head_dim` (64 or
/// 128): [`TILE_STEPS`] x 1024 values, 16 KiB of f16 at either head dim. A
/// warp holds a tile from its first load to its last store, so the tile's
/// size sets how many bytes the warps in flight span, and how many tickets
/// (each a round trip and a fenced count) a launch pays for its bytes.
pub const fn tile_rows(head_dim: u32) -> u32 {
    TILE_STEPS * 32 * LANE_VALUES / head_dim
}

/// Values of one row that one lane holds: a row of `D` values spans `D / 32`
/// lanes, each holding 16-byte chunks `j * D / 32 + lane_in_row` of the row
/// (so the butterflies of span below the chunk and of span `D / 32` chunks
/// and up stay within the lane; only the spans between are shuffles).
pub const LANE_VALUES: u32 = 32;

/// The most tensors one launch quantizes.
pub const MAX_TENSORS: usize = 3;

/// Bytes of input whose amax the schedule keeps ahead of their encode
/// ([`lag_units`]): more than the tiles an H100/H200 holds in flight at
/// once (~2,100 warps of 16 KiB), so an encode tile rarely waits for its
/// unit's amax tiles, and less than its L2 (50 MB), so most of the encode
/// tiles' reads hit it (measured: lab/quantizer.md, step 5).
pub const LAG_BYTES: usize = 32 << 20;

/// One tensor of a launch.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QuantizeTensor {
    /// Device address of the input values `[B, H, S, D]` (f16, bf16 or f32 as
    /// the entry says), aligned to 16 bytes.
    pub input: u64,
    /// Device address of the output codes `[B, H, S, D]`, one byte each,
    /// aligned to 8 bytes.
    pub codes: u64,
    /// Device address of one f32 dequantization scale per scale group.
    pub scales: u64,
    /// [`Rotation::code`] of this tensor's rotation.
    pub rotation: u32,
    /// Zero: keeps the struct free of padding bytes.
    pub reserved: u32,
}

/// The launch parameters (one `repr(C)` struct shared with the host, as
/// [`crate::params::AttnParams`]). The host derives the counts from the
/// shape ([`QuantizeParams::tiles_per_unit`] and the rest); the kernel
/// trusts them.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QuantizeParams {
    /// The tensors; the first `tiles_per_pass / (groups * tiles_per_unit)`
    /// are used.
    pub tensors: [QuantizeTensor; MAX_TENSORS],
    /// Device address of [`scratch_words`] `u32`s, zero at launch.
    pub scratch: u64,
    /// Rows per (batch, head): `S`.
    pub seq: u32,
    /// Heads: `H`.
    pub heads: u32,
    /// The scale group of `(b, h)` is `b * group_batch_stride + h`: 0 for
    /// one scale per head, `H` for one per (batch, head).
    pub group_batch_stride: u32,
    /// Scale groups per tensor: `H`, or `B * H`.
    pub groups: u32,
    /// Tiles per slice: `ceil(S / tile_rows(D))`.
    pub row_tiles: u32,
    /// Tiles per unit: `B * row_tiles` per head, `row_tiles` per (batch, head).
    pub tiles_per_unit: u32,
    /// Tiles of all units (each done once per kind): `tensors * groups *
    /// tiles_per_unit`; the launch has `2 * tiles_per_pass` warps.
    pub tiles_per_pass: u32,
    /// Amax tiles ahead of the first encode tile: [`lag_units`] units.
    pub lag_tiles: u32,
}

/// The `u32` scratch words a launch over `units` units (tensors x scale
/// groups) needs: the ticket counter, then `amax`, `amax_done` and
/// `encode_done` per unit (see [`unit_words`]).
pub const fn scratch_words(units: usize) -> usize {
    1 + 3 * units
}

/// The indices of unit `unit`'s `amax`, `amax_done` and `encode_done`
/// words among the scratch words of a launch over `units` units (word 0 is
/// the ticket counter), packed by kind.
pub const fn unit_words(units: usize, unit: usize) -> [usize; 3] {
    [1 + unit, 1 + units + unit, 1 + 2 * units + unit]
}

/// Units of amax the schedule keeps ahead of the encode tiles: the units
/// that fill [`LAG_BYTES`] of input, at least 1 (an encode tile must come
/// after its unit's amax tiles), at most `units`.
pub const fn lag_units(units: u32, unit_input_bytes: usize) -> u32 {
    let fill = LAG_BYTES / if unit_input_bytes == 0 { 1 } else { unit_input_bytes };
    let lag = if fill > units as usize { units } else { fill as u32 };
    if lag == 0 { 1 } else { lag }
}

/// Warps per block.
pub const WARPS: u32 = THREADS / 32;

/// Blocks of a launch with `tiles_per_pass` tiles of each kind: one warp per
/// tile and kind (`2 * tiles_per_pass` warps; the last block's extra warps
/// exit at once).
pub const fn blocks(tiles_per_pass: u32) -> u32 {
    (2 * tiles_per_pass).div_ceil(WARPS)
}

/// What the warp holding a ticket does: an amax or an encode tile.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Work {
    /// The amax of tile `a` (`0 <= a < tiles_per_pass`).
    Amax(u32),
    /// The codes of tile `e`.
    Encode(u32),
}

/// The work of `ticket` (`0 <= ticket < 2 * tiles`) when each kind has
/// `tiles` tiles and the amax runs `lag` tiles ahead (`1 <= lag <= tiles`,
/// a whole number of units): amax tiles `0..lag`, then encode `e` and amax
/// `lag + e` alternately, then the remaining encode tiles. Encode tile `e`
/// comes after amax tile `e + lag - 1`, so after every amax tile of its unit
/// when a unit has at most `lag` tiles.
pub const fn schedule(ticket: u32, tiles: u32, lag: u32) -> Work {
    if ticket < lag {
        return Work::Amax(ticket);
    }
    let j = ticket - lag;
    let interleaved = 2 * (tiles - lag);
    if j < interleaved {
        if j % 2 == 0 { Work::Encode(j / 2) } else { Work::Amax(lag + j / 2) }
    } else {
        Work::Encode(tiles - lag + (j - interleaved))
    }
}

/// The input's element type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InputDtype {
    /// IEEE half precision.
    F16,
    /// bfloat16.
    Bf16,
    /// IEEE single precision.
    F32,
}

impl InputDtype {
    /// Bytes per element.
    pub const fn bytes(self) -> usize {
        match self {
            InputDtype::F16 | InputDtype::Bf16 => 2,
            InputDtype::F32 => 4,
        }
    }
}

/// Whether each row is rotated before it is quantized. Given to Q and K
/// alike, the rotation cancels in `Q·Kᵀ` (`(QR)(KR)ᵀ = Q R Rᵀ Kᵀ = Q Kᵀ` for an
/// orthogonal `R`) while it spreads a row's outliers over all `D`
/// dimensions, where E4M3's relative rounding costs the scores less. V is
/// never rotated: its rotation would not cancel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rotation {
    /// The values as they are.
    None,
    /// Each row times the normalised Walsh–Hadamard matrix `H_D / sqrt(D)`:
    /// butterflies of span 1, 2, 4, ..., `D/2` (`(a, b)` at `(i, i + span)`
    /// becomes `(a + b, a - b)`), in f32, then every element times
    /// [`hadamard_norm`]`(D)`.
    Hadamard,
}

impl Rotation {
    /// The value of [`QuantizeTensor::rotation`] for this rotation.
    pub const fn code(self) -> u32 {
        match self {
            Rotation::None => ROTATION_NONE,
            Rotation::Hadamard => ROTATION_HADAMARD,
        }
    }
}

/// [`QuantizeTensor::rotation`] of an unrotated tensor.
pub const ROTATION_NONE: u32 = 0;

/// [`QuantizeTensor::rotation`] of a tensor rotated by the Hadamard matrix.
pub const ROTATION_HADAMARD: u32 = 1;

/// The f32 nearest to `1 / sqrt(head_dim)` for the head dims the quantizer
/// supports (64 and 128; 0.0 for any other): the Hadamard normalisation.
pub const fn hadamard_norm(head_dim: u32) -> f32 {
    match head_dim {
        64 => 0.125,
        // 1 / sqrt(128) = 0.0883883476..., to the nearest f32
        // (0.0883883461...), by its bits.
        128 => f32::from_bits(0x3DB5_04F3),
        _ => 0.0,
    }
}

/// One quantizer entry point (both kinds of tile, any rotation per tensor).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QuantizeKernel {
    /// The PTX entry symbol.
    pub entry: &'static str,
    /// The input's element type.
    pub input: InputDtype,
    /// `D`.
    pub head_dim: u32,
}

/// Shorthand for the table below.
const fn kernel(entry: &'static str, input: InputDtype, head_dim: u32) -> QuantizeKernel {
    QuantizeKernel { entry, input, head_dim }
}

use InputDtype::{Bf16, F16, F32};

/// Every quantizer entry: each input type and head dim (64, 128). Built for
/// both images (plain sm_80+ PTX).
pub const QUANTIZE_KERNELS: [QuantizeKernel; 6] = [
    kernel("sdpa_quantize_f16_d64", F16, 64),
    kernel("sdpa_quantize_f16_d128", F16, 128),
    kernel("sdpa_quantize_bf16_d64", Bf16, 64),
    kernel("sdpa_quantize_bf16_d128", Bf16, 128),
    kernel("sdpa_quantize_f32_d64", F32, 64),
    kernel("sdpa_quantize_f32_d128", F32, 128),
];

/// The entry for this input type and head dim, if built.
pub fn find(input: InputDtype, head_dim: u32) -> Option<&'static QuantizeKernel> {
    QUANTIZE_KERNELS.iter().find(|k| k.input == input && k.head_dim == head_dim)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every unit's three words and the ticket counter are distinct and
    /// inside the scratch.
    #[test]
    fn unit_words_are_distinct_and_inside_the_scratch() {
        for units in [1, 2, 48, 144] {
            let mut seen = vec![false; scratch_words(units)];
            seen[0] = true;
            for unit in 0..units {
                for word in unit_words(units, unit) {
                    assert!(word < scratch_words(units), "unit {unit}: word {word}");
                    assert!(!seen[word], "unit {unit}: word {word} twice");
                    seen[word] = true;
                }
            }
        }
    }

    /// The protocol, played out on the CPU: one warp per ticket, warps
    /// stepping in random order, fewer resident than launched (a warp
    /// starts when another exits): every tile's amax and encode done once,
    /// no encode before its unit's amax, no deadlock, and the counters back
    /// at zero (the ticket counter with `atom.inc`'s wrap).
    #[test]
    fn warps_finish_every_tile_and_leave_the_counters_zero() {
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        let mut random = move |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        };
        // (units, tiles per unit, warps resident at once)
        for (units, tiles_per_unit, resident) in [(1, 1, 8), (3, 5, 4), (12, 4, 24), (7, 9, 3), (7, 9, 1)] {
            for lag_units in 1..=units.min(3) {
                let tiles = units * tiles_per_unit;
                let warps = 2 * tiles;
                let lag = lag_units * tiles_per_unit;
                let inc = |x: &mut u32, bound: u32| {
                    let old = *x;
                    *x = if old >= bound { 0 } else { old + 1 };
                    old
                };
                let (mut ticket, mut amax_done, mut encode_done) =
                    (0u32, vec![0u32; units as usize], vec![0u32; units as usize]);
                let (mut amax_at, mut encode_at) = (vec![0u32; tiles as usize], vec![0u32; tiles as usize]);
                // Per warp: None before it starts or after it exits, Some(None)
                // before its ticket, Some(Some(t)) holding t.
                let mut warp: Vec<Option<Option<u32>>> = vec![None; warps as usize];
                let (mut started, mut running, mut exited, mut step) = (0usize, 0usize, 0usize, 1u32);
                while exited < warps as usize {
                    if running < resident as usize && started < warps as usize {
                        warp[started] = Some(None);
                        started += 1;
                        running += 1;
                    }
                    let movable: Vec<usize> = (0..warps as usize)
                        .filter(|&w| match warp[w] {
                            Some(Some(t)) => match schedule(t, tiles, lag) {
                                Work::Amax(_) => true,
                                Work::Encode(e) => amax_done[(e / tiles_per_unit) as usize] == tiles_per_unit,
                            },
                            Some(None) => true,
                            None => false,
                        })
                        .collect();
                    assert!(!movable.is_empty(), "deadlock: {units} x {tiles_per_unit}, lag {lag}");
                    let w = movable[random(movable.len())];
                    warp[w] = match warp[w] {
                        Some(None) => Some(Some(inc(&mut ticket, warps - 1))),
                        Some(Some(t)) => {
                            match schedule(t, tiles, lag) {
                                Work::Amax(a) => {
                                    amax_done[(a / tiles_per_unit) as usize] += 1;
                                    amax_at[a as usize] = step;
                                }
                                Work::Encode(e) => {
                                    let unit = (e / tiles_per_unit) as usize;
                                    if inc(&mut encode_done[unit], tiles_per_unit - 1) == tiles_per_unit - 1 {
                                        amax_done[unit] = 0;
                                    }
                                    encode_at[e as usize] = step;
                                }
                            }
                            step += 1;
                            running -= 1;
                            exited += 1;
                            None
                        }
                        None => unreachable!("only running warps move"),
                    };
                }
                assert_eq!(ticket, 0, "the ticket counter wraps to zero");
                assert!(amax_done.iter().chain(&encode_done).all(|&c| c == 0), "unit counters left nonzero");
                for tile in 0..tiles {
                    let unit = tile / tiles_per_unit;
                    let last_amax = (unit * tiles_per_unit..(unit + 1) * tiles_per_unit)
                        .map(|t| amax_at[t as usize])
                        .max()
                        .unwrap_or(0);
                    assert!(last_amax > 0 && encode_at[tile as usize] > last_amax, "tile {tile}: encode before amax");
                }
            }
        }
    }
}
