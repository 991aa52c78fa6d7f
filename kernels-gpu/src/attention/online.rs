//! The online-softmax step on accumulator fragments, shared by the
//! `mma.sync` and `wgmma` kernels (their accumulators have the same per-warp
//! layout): each thread holds two query rows (`group`, `group + 8`) of 16x8
//! tiles `[c0, c1, c2, c3]` (`c0, c1` row `group`, `c2, c3` row `group + 8`,
//! columns `2 * quad + {0, 1}` of each tile).

use super::output::OutputFormat;
use crate::arch::{cvt, math, shfl};
use crate::schedule;
use crate::softmax::{self, RowMax};

/// `for ($t, $tile) in $s.iter_mut().enumerate() $body` over score tiles,
/// written out by [`each_tile`] past 16 tiles: LLVM's full-unroll
/// threshold stops short of the softmax's loops over more tiles, and a
/// loop left rolled indexes the scores dynamically, which sends the whole
/// array to local memory. Up to 16 tiles the loop is the one every 64-key
/// kernel was measured with (the same PTX).
macro_rules! for_each_tile {
    (($t:pat, $tile:ident) in $s:ident => $body:block) => {
        if $s.len() > 16 {
            each_tile($s, |$t, $tile| $body)
        } else {
            for ($t, $tile) in $s.iter_mut().enumerate() $body
        }
    };
}

/// How the softmax computes a probability's exponent `score * scale - base`
/// (`softmax::exponent`): a kernel's policy, or the host's choice per problem
/// (`AttnParams::fused_exponent`).
///
/// (A policy type's name orders the kernel's instantiations in the PTX
/// module, by symbol name: renaming one may renumber registers in the
/// entries that use it, with no change in the code.)
pub trait Exponent {
    /// The exponent of a score `x` scaled by `scale` against its row's `base`.
    fn of(x: f32, scale: f32, base: f32) -> f32;
}

/// One FFMA, `fma(x, scale, -base)`: exact weights while every score is
/// below `softmax::FUSED_SCORE_LIMIT`.
pub struct FusedFma;

/// A multiply and a subtract, which gives the row's largest score exactly 0.
pub struct Unfused;

impl Exponent for Unfused {
    #[inline(always)]
    fn of(x: f32, scale: f32, base: f32) -> f32 {
        softmax::exponent::<false>(x, scale, base, math::fma)
    }
}

impl Exponent for FusedFma {
    #[inline(always)]
    fn of(x: f32, scale: f32, base: f32) -> f32 {
        softmax::exponent::<true>(x, scale, base, math::fma)
    }
}

/// Running state of this thread's two rows.
pub struct Rows {
    /// Running maxima (base-2 scaled).
    pub m: [RowMax; 2],
    /// This thread's partial row sums (the quad's four partials add up to the
    /// row sum; they are combined once, in [`Rows::output_scales`]).
    pub l: [f32; 2],
}

/// Where this thread's rows and columns are, for masking.
#[derive(Clone, Copy)]
pub struct MaskGeometry {
    /// Query row of `c0` (the first of the thread's two rows).
    pub row: u32,
    /// `2 * quad`: the column of `c0` inside each 8-column tile.
    pub col: u32,
    /// Query length.
    pub seq_q: u32,
    /// Key length.
    pub seq_kv: u32,
    /// Causal masking.
    pub causal: bool,
}

impl Rows {
    /// Two rows that have seen no key.
    pub const EMPTY: Rows = Rows { m: [RowMax::EMPTY; 2], l: [0.0; 2] };

    /// One key block: masks scores (`-inf`) of keys a row must not see when
    /// `mask` is given (its `key0` is the block's first key), turns `s` into
    /// probabilities `p = 2^(s * scale - m)` in place (the exponent as `E`
    /// computes it), folds them into the running state, and
    /// rescales the output accumulator `o`.
    ///
    /// # Safety
    /// The whole warp calls it together (quad shuffles).
    #[inline(always)]
    pub unsafe fn step<E: Exponent, const S_TILES: usize, const O_TILES: usize>(
        &mut self,
        s: &mut [[f32; 4]; S_TILES],
        o: &mut [[f32; 4]; O_TILES],
        score_scale_log2: f32,
        mask: Option<(MaskGeometry, u32)>,
    ) {
        // SAFETY: forwarded.
        let alpha = unsafe { self.softmax::<E, 1, S_TILES>(s, score_scale_log2, mask) };
        rescale(o, alpha);
    }

    /// The part of [`Rows::step`] that does not touch the output: masks,
    /// turns `s` into probabilities and folds them into the running state
    /// (the exact running maxima, `RowMax::update` without slack; each
    /// row's maximum and sum folded as `CHAINS` chains, see `fold_row`);
    /// returns the factors (`alpha`) by which the output accumulated so far
    /// must be rescaled ([`rescale`]) before this block's `P·V` is added.
    ///
    /// # Safety
    /// The whole warp calls it together (quad shuffles).
    #[inline(always)]
    pub unsafe fn softmax<E: Exponent, const CHAINS: usize, const S_TILES: usize>(
        &mut self,
        s: &mut [[f32; 4]; S_TILES],
        score_scale_log2: f32,
        mask: Option<(MaskGeometry, u32)>,
    ) -> [f32; 2] {
        mask_scores(s, mask);
        let mut alpha = [0f32; 2];
        let mut base = [0f32; 2];
        for h in 0..2 {
            // SAFETY: converged warp (the caller's contract).
            let tile_max = unsafe { block_max::<S_TILES, CHAINS>(s, h) };
            (alpha[h], base[h]) = self.m[h].update(tile_max * score_scale_log2, 0.0, math::exp2);
        }
        for tile in s.iter_mut() {
            for (e, x) in tile.iter_mut().enumerate() {
                *x = math::exp2(E::of(*x, score_scale_log2, base[e / 2]));
            }
        }
        for h in 0..2 {
            self.l[h] = self.l[h] * alpha[h] + fold_row::<S_TILES, CHAINS>(s, h, 0.0, |a, b| a + b);
        }
        alpha
    }

    /// [`Rows::softmax`] without the row sums for a lazy maximum
    /// (`max_slack > 0`), with a fast path for the usual block: when no
    /// score of the warp's rows exceeds its row's `over_at` (the score above
    /// which `RowMax::update` would move the maximum, `RowMax::moves_above`;
    /// `-inf` before a row's first key), no maximum
    /// moves, so the block's maxima, their shuffles and the update are
    /// skipped: masks, one compare per score and a warp vote, then the
    /// exponentials with the kept maxima; returns `None`. Otherwise it folds
    /// the block's maxima into the running ones (`RowMax::update` with
    /// `max_slack`), sets `over_at` for them, takes the exponentials with
    /// them and returns the rows' `alpha` (some row's maximum moved, so the
    /// output needs its rescale). `over_at` is derived from the maxima, kept
    /// so that the usual block costs no division.
    ///
    /// # Safety
    /// The whole warp calls it together (quad shuffles, warp vote).
    #[inline(always)]
    pub unsafe fn softmax_lazy<E: Exponent, const CHAINS: usize, const S_TILES: usize>(
        &mut self,
        s: &mut [[f32; 4]; S_TILES],
        score_scale_log2: f32,
        max_slack: f32,
        over_at: &mut [f32; 2],
        mask: Option<(MaskGeometry, u32)>,
    ) -> Option<[f32; 2]> {
        mask_scores(s, mask);
        // Four independent chains of compares, joined at the end.
        let mut over = [false; 4];
        for_each_tile!((t, tile) in s => {
            for (e, x) in tile.iter().enumerate() {
                over[(2 * t + e % 2) % 4] |= *x > over_at[e / 2];
            }
        });
        // SAFETY: converged warp (the caller's contract).
        let moved = if unsafe { shfl::any((over[0] | over[1]) | (over[2] | over[3])) } {
            let mut alpha = [0f32; 2];
            for h in 0..2 {
                // SAFETY: converged warp (the caller's contract).
                let tile_max = unsafe { block_max::<S_TILES, CHAINS>(s, h) };
                alpha[h] = self.m[h].update(tile_max * score_scale_log2, max_slack, math::exp2).0;
                over_at[h] = self.m[h].moves_above(max_slack, score_scale_log2);
            }
            Some(alpha)
        } else {
            None
        };
        // The exponentials as in `Rows::softmax` (one helper for both
        // reordered `split`'s and `wgmma`'s PTX).
        let base = self.m.map(RowMax::base);
        for_each_tile!((_, tile) in s => {
            for (e, x) in tile.iter_mut().enumerate() {
                *x = math::exp2(E::of(*x, score_scale_log2, base[e / 2]));
            }
        });
        moved
    }

    /// [`Rows::softmax_lazy`] of a first key block whose first `lead`
    /// 64-key tiles are empty slots (`wgmma`'s 192-key kernel): their
    /// scores set to `-inf` tile by tile, the rest masked only by `mask`
    /// (where a later block would be too; its first key is the block's
    /// first slot's), instead of a key test per score over the whole block
    /// (measured 1-2% of the kernel at 2048-4096 keys, see lab/).
    ///
    /// # Safety
    /// As [`Rows::softmax_lazy`].
    #[inline(always)]
    pub unsafe fn softmax_past_lead<E: Exponent, const CHAINS: usize, const S_TILES: usize>(
        &mut self,
        s: &mut [[f32; 4]; S_TILES],
        lead: u32,
        score_scale_log2: f32,
        over_at: &mut [f32; 2],
        mask: Option<(MaskGeometry, u32)>,
    ) -> Option<[f32; 2]> {
        for_each_tile!((t, tile) in s => {
            if (t as u32) < 8 * lead {
                *tile = [f32::NEG_INFINITY; 4];
            }
        });
        // SAFETY: forwarded.
        unsafe { self.softmax_lazy::<E, CHAINS, S_TILES>(s, score_scale_log2, softmax::LAZY_MAX_SLACK, over_at, mask) }
    }

    /// Adds this lane's probabilities `p` of its two rows into the row sums,
    /// scaled first by `alpha` where a maximum moved: the sums of a
    /// [`Rows::softmax_lazy`] caller whose P·V does not add them (`wgmma`'s
    /// E4M3 P·V; [`Rows::softmax`] adds its own).
    #[inline(always)]
    pub fn add_sums<const S_TILES: usize>(&mut self, p: &[[f32; 4]; S_TILES], alpha: Option<[f32; 2]>) {
        if let Some(alpha) = alpha {
            self.l = [self.l[0] * alpha[0], self.l[1] * alpha[1]];
        }
        for t in p {
            self.l[0] += t[0] + t[1];
            self.l[1] += t[2] + t[3];
        }
    }

    /// The factors that turn each row's accumulator into the output: V's
    /// scale over the full row sum (0 for a row that saw no key).
    ///
    /// # Safety
    /// The whole warp calls it together (quad shuffles).
    #[inline(always)]
    pub unsafe fn output_scales(&self, v_scale: f32) -> [f32; 2] {
        // SAFETY: forwarded.
        unsafe { self.row_sums() }.map(|x| softmax::output_scale(x, v_scale, math::rcp))
    }

    /// The full sums of this thread's two rows (the quad's partials added).
    ///
    /// # Safety
    /// The whole warp calls it together (quad shuffles).
    #[inline(always)]
    pub unsafe fn row_sums(&self) -> [f32; 2] {
        let mut l = self.l;
        for x in l.iter_mut() {
            // SAFETY: converged warp.
            unsafe {
                *x += shfl::shfl_xor_f32(*x, 1);
                *x += shfl::shfl_xor_f32(*x, 2);
            }
        }
        l
    }
}

/// Sets to `-inf` the scores of keys a row must not see, when `mask` is
/// given (its `key0` is the block's first key).
#[inline(always)]
fn mask_scores<const S_TILES: usize>(s: &mut [[f32; 4]; S_TILES], mask: Option<(MaskGeometry, u32)>) {
    if let Some((g, key0)) = mask {
        for_each_tile!((t, tile) in s => {
            for (e, x) in tile.iter_mut().enumerate() {
                let row = g.row + 8 * (e as u32 / 2);
                // Wrapping: `wgmma`'s first block of three tiles may start
                // before key 0; those keys wrap past `seq_kv`, hidden.
                let key = key0.wrapping_add(t as u32 * 8).wrapping_add(g.col).wrapping_add(e as u32 % 2);
                if !schedule::key_visible(row, key, g.seq_q, g.seq_kv, g.causal) {
                    *x = f32::NEG_INFINITY;
                }
            }
        });
    }
}

/// Calls `f(t, &mut tile)` for each tile `t` of `s` (up to 32), written
/// out: see [`for_each_tile`].
#[inline(always)]
fn each_tile<T, const N: usize>(s: &mut [T; N], mut f: impl FnMut(usize, &mut T)) {
    const { assert!(N <= 32) };
    macro_rules! calls {
        ($($t:literal)*) => {
            $(if let Some(tile) = s.get_mut($t) {
                f($t, tile);
            })*
        };
    }
    calls!(0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31);
}

/// The maximum of row `h`'s scores in this block: [`fold_row`] over the
/// thread's values, then over the quad that shares the row.
///
/// # Safety
/// The whole warp calls it together (quad shuffles).
#[inline(always)]
unsafe fn block_max<const S_TILES: usize, const CHAINS: usize>(s: &[[f32; 4]; S_TILES], h: usize) -> f32 {
    let tile_max = fold_row::<S_TILES, CHAINS>(s, h, f32::NEG_INFINITY, f32::max);
    // SAFETY: converged warp; the four lanes of a quad share the row.
    unsafe {
        let tile_max = tile_max.max(shfl::shfl_xor_f32(tile_max, 1));
        tile_max.max(shfl::shfl_xor_f32(tile_max, 2))
    }
}

/// Folds `op` over this thread's values of row `h` (`h` = 0 or 1: elements
/// `2h, 2h + 1` of every tile) from `init`: with `CHAINS == 1` as one
/// chain in tile order; with `CHAINS == 4` (`S_TILES` a multiple of 4) as
/// four independent chains over tiles `k`, `k + 4`, .., joined as a tree, so the
/// dependent chain is `S_TILES / 4 + 2` long instead of `2 * S_TILES` (a row's
/// maximum and sum lie on every key block's critical path; the one chain
/// keeps `mma` D=64 at 128 registers).
#[inline(always)]
fn fold_row<const S_TILES: usize, const CHAINS: usize>(
    s: &[[f32; 4]; S_TILES],
    h: usize,
    init: f32,
    op: impl Fn(f32, f32) -> f32,
) -> f32 {
    const { assert!(CHAINS == 1 || (CHAINS == 4 && S_TILES % 4 == 0)) };
    if CHAINS == 1 {
        return s.iter().fold(init, |acc, tile| op(op(acc, tile[2 * h]), tile[2 * h + 1]));
    }
    let pair = |t: usize| op(s[t][2 * h], s[t][2 * h + 1]);
    let chain = |k: usize| (k + 4..S_TILES).step_by(4).fold(pair(k), |acc, t| op(acc, pair(t)));
    op(init, op(op(chain(0), chain(1)), op(chain(2), chain(3))))
}

/// Rescales this thread's two rows of the output accumulator by `alpha`.
#[inline(always)]
pub fn rescale<const O_TILES: usize>(o: &mut [[f32; 4]; O_TILES], alpha: [f32; 2]) {
    for tile in o.iter_mut() {
        for (e, x) in tile.iter_mut().enumerate() {
            *x *= alpha[e / 2];
        }
    }
}

/// The A operand (f16, `m16n8k16` layout) for keys `16 kk .. 16 kk + 15` of
/// the probabilities `p` (two adjacent 8-column accumulator tiles).
/// [`p_fragments`] gives all of them.
#[inline(always)]
pub fn p_fragment<const S_TILES: usize>(p: &[[f32; 4]; S_TILES], kk: usize) -> [u32; 4] {
    let (lo, hi) = (&p[2 * kk], &p[2 * kk + 1]);
    [
        cvt::pack_f16x2(lo[0], lo[1]),
        cvt::pack_f16x2(lo[2], lo[3]),
        cvt::pack_f16x2(hi[0], hi[1]),
        cvt::pack_f16x2(hi[2], hi[3]),
    ]
}

/// Writes this thread's part of the output: rows `local_row`, `local_row + 8`
/// of the block (skipping rows at or past `rows`), columns `2 * quad + {0, 1}`
/// of every 8-column tile of `o`, scaled by `scales`, rounded as `Out`.
///
/// # Safety
/// `out` points at the block's `rows` output rows of `HEAD_DIM` 16-bit
/// elements, `row_stride` elements apart (even).
#[inline(always)]
pub unsafe fn store_rows<const HEAD_DIM: usize, const O_TILES: usize, Out: OutputFormat>(
    out: *mut u16,
    o: &[[f32; 4]; O_TILES],
    scales: [f32; 2],
    (local_row, row_stride): (u32, u32),
    rows: u32,
    quad: u32,
) {
    for h in 0..2u32 {
        let row = local_row + 8 * h;
        if row >= rows {
            continue;
        }
        let (hh, s) = (2 * h as usize, scales[h as usize]);
        for (t, tile) in o.iter().enumerate() {
            let col = t * 8 + 2 * quad as usize;
            let packed = Out::pack2(tile[hh] * s, tile[hh + 1] * s);
            // A row that saw no key (s == 0) is written as exact zeros: its
            // accumulator may hold 0 x NaN from V, so no product here.
            let packed = if s == 0.0 { 0 } else { packed };
            // SAFETY: row < rows and col + 1 < HEAD_DIM: inside the output; 4-byte aligned.
            unsafe { *(out.add(row as usize * row_stride as usize + col) as *mut u32) = packed };
        }
    }
}

/// The A operands for every 16-key slice of the probabilities `p`
/// (`P_STEPS = S_TILES / 2`).
#[inline(always)]
pub fn p_fragments<const S_TILES: usize, const P_STEPS: usize>(p: &[[f32; 4]; S_TILES]) -> [[u32; 4]; P_STEPS] {
    core::array::from_fn(|kk| p_fragment(p, kk))
}

/// Writes the natural log-sum-exp of this thread's two rows (`local_row`,
/// `local_row + 8` of the block, skipping rows at or past `rows`) to entry
/// `row * step` of `lse`, from their bases (`m`) and full `sums`; quad
/// lane 0 writes.
///
/// # Safety
/// `lse` holds the block's `rows` entries, `step` apart.
#[inline(always)]
pub unsafe fn store_lse(
    (lse, step): (*mut f32, u32),
    m: &[RowMax; 2],
    sums: [f32; 2],
    local_row: u32,
    rows: u32,
    quad: u32,
) {
    for h in 0..2u32 {
        let row = local_row + 8 * h;
        if quad == 0 && row < rows {
            let value = softmax::log_sum_exp(m[h as usize].base(), sums[h as usize], math::log2);
            // SAFETY: row < rows: one of the block's entries.
            unsafe { *lse.add((row * step) as usize) = value };
        }
    }
}
