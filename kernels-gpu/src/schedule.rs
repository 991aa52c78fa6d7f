//! Which keys a query row sees, which key blocks a query block visits, and
//! the launch grid. Pure functions shared by the kernels, the host and the
//! CPU emulation of the tile schedule in the tests.
//!
//! Causal masking aligns the last query with the last key (bottom-right, as
//! FlashAttention-2 does): query row `i` sees key `j` iff
//! `j <= i + seq_kv - seq_q`. A row that sees no key produces zeros.
//! The host keeps every length below 2^30 (see `MAX_SEQ_LEN`), so the `i32`
//! arithmetic below cannot overflow.

/// The longest sequence (query or key) the kernels accept.
pub const MAX_SEQ_LEN: u32 = 1 << 30;

/// The last key index (inclusive) that query `row` may see under causal
/// masking; negative when the row sees no key at all.
#[inline(always)]
pub fn causal_last_key(row: u32, seq_q: u32, seq_kv: u32) -> i32 {
    row as i32 + seq_kv as i32 - seq_q as i32
}

/// Whether query `row` sees `key` (`key < seq_kv`, and the causal rule).
#[inline(always)]
pub fn key_visible(row: u32, key: u32, seq_q: u32, seq_kv: u32, causal: bool) -> bool {
    key < seq_kv && (!causal || key as i32 <= causal_last_key(row, seq_q, seq_kv))
}

/// Exclusive end of the keys seen by any of the query rows
/// `row_start .. row_start + rows` (clipped to `seq_q`); keys `0 .. end` are
/// the only ones the block must visit. 0 when no row sees a key.
/// Requires `row_start < seq_q` and `rows >= 1`.
#[inline(always)]
pub fn key_end(row_start: u32, rows: u32, seq_q: u32, seq_kv: u32, causal: bool) -> u32 {
    if !causal {
        return seq_kv;
    }
    let last_row = if seq_q - row_start < rows { seq_q - 1 } else { row_start + rows - 1 };
    let end = causal_last_key(last_row, seq_q, seq_kv) + 1;
    if end <= 0 { 0 } else { (end as u32).min(seq_kv) }
}

/// Whether a key block `key_start .. key_start + block_n` may hide a key
/// from some row of the query block starting at `row_start`: past the end
/// of the keys, or (causal) past the first row's last key. Blocks for which
/// this is false need no per-element mask.
#[inline(always)]
pub fn block_needs_mask(row_start: u32, key_start: u32, block_n: u32, seq_q: u32, seq_kv: u32, causal: bool) -> bool {
    let key_last = key_start + block_n - 1;
    key_last >= seq_kv || (causal && key_last as i32 > causal_last_key(row_start, seq_q, seq_kv))
}

/// The first key block (of `block_n` keys from key 0) for which
/// [`block_needs_mask`] holds; every later one needs a mask too (a block's
/// last key only grows), every earlier one none. So a loop over a query
/// block's key blocks tests `j >= first_masked_block(..)` instead of
/// building the test per block.
#[inline(always)]
pub fn first_masked_block(row_start: u32, block_n: u32, seq_q: u32, seq_kv: u32, causal: bool) -> u32 {
    // The smallest last key that needs a mask: `seq_kv`, or (causal) one
    // past the first row's last key, whichever is lower (negative: any).
    let mut limit = seq_kv as i64;
    if causal {
        limit = limit.min(causal_last_key(row_start, seq_q, seq_kv) as i64 + 1);
    }
    // The first j with j * block_n + block_n - 1 >= limit.
    let first = (limit - block_n as i64 + 1).max(0) as u64;
    first.div_ceil(block_n as u64) as u32
}

/// Division of dividends below 2^31 by a divisor fixed at launch, as one
/// multiply-high and a shift, with no branch: the host computes it
/// ([`FastDiv::new`]) and passes it in [`crate::params::AttnParams`], so no
/// kernel runs an integer division (a ~20-instruction dependent chain
/// through `MUFU.RCP`).
///
/// With `s = ceil(log2 d)` (0 for `d = 1`), `multiplier = ceil(2^(31+s) / d)`
/// lies in `[2^31, 2^32)` and `n / d = mulhi(2n, multiplier) >> s`:
/// `n * multiplier / 2^(31+s)` exceeds `n / d` by less than
/// `n / 2^(31+s) < 1 / d`, which never crosses the next integer for
/// `n < 2^31`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FastDiv {
    /// `ceil(2^(31+s) / d)`.
    pub multiplier: u32,
    /// `s = ceil(log2 d)`.
    pub shift: u32,
}

impl FastDiv {
    /// The division by `divisor` (0 is taken as 1; divisors above 2^31
    /// as 2^31, which gives the same quotient 0 for every dividend below
    /// 2^31).
    pub const fn new(divisor: u32) -> FastDiv {
        let d = if divisor == 0 {
            1
        } else if divisor > 1 << 31 {
            1 << 31
        } else {
            divisor
        };
        let shift = 32 - (d - 1).leading_zeros();
        let multiplier = ((1u64 << (31 + shift)).div_ceil(d as u64)) as u32;
        FastDiv { multiplier, shift }
    }

    /// `n / divisor`, exact for `n < 2^31`.
    #[inline(always)]
    pub const fn div(self, n: u32) -> u32 {
        ((((n << 1) as u64 * self.multiplier as u64) >> 32) as u32) >> self.shift
    }
}

/// The division that maps a query head to its key/value head under
/// grouped-query attention (`heads_q / heads_kv` query heads share one K/V
/// head; a zero or invalid ratio is taken as 1, so no panic path exists).
pub const fn kv_group(heads_q: u32, heads_kv: u32) -> FastDiv {
    match heads_q.checked_div(heads_kv) {
        Some(group) => FastDiv::new(group),
        None => FastDiv::new(1),
    }
}

/// The key/value head that query head `head` reads (see [`kv_group`]).
#[inline(always)]
pub const fn kv_head(head: u32, heads_q: u32, heads_kv: u32) -> u32 {
    kv_group(heads_q, heads_kv).div(head)
}

/// Number of `block`-sized pieces covering `len` (ceiling division).
#[inline(always)]
pub const fn blocks(len: u32, block: u32) -> u32 {
    len.div_ceil(block)
}

/// The largest launch-grid extent along y and z.
pub const MAX_GRID_YZ: u32 = 65_535;

/// Whether a launch orders its blocks heaviest first across every (batch,
/// head): under causal masking the last query blocks see the most keys.
/// The hardware starts blocks in x, then y, then z order, so with the
/// query block along z (reversed) every head's longest blocks start in the
/// first wave and the short ones of all heads fill the tail; with the
/// query block along x (the order when the grid would not fit), only each
/// head's blocks are ordered, and the last heads' longest blocks start last
/// (see lab/).
#[inline(always)]
pub const fn heaviest_first(query_blocks: u32, causal: bool) -> bool {
    causal && query_blocks <= MAX_GRID_YZ
}

/// The launch grid of a kernel whose blocks cover `block_m` query rows:
/// `(query blocks, query heads, batch)`, or, ordered heaviest first
/// ([`heaviest_first`]), `(query heads, batch, query blocks)`.
#[inline(always)]
pub const fn grid(block_m: u32, batch: u32, heads_q: u32, seq_q: u32, causal: bool) -> (u32, u32, u32) {
    let query_blocks = blocks(seq_q, block_m);
    if heaviest_first(query_blocks, causal) { (heads_q, batch, query_blocks) } else { (query_blocks, heads_q, batch) }
}

/// The first block (of `block` rows) of packed sequence `b` whose rows
/// start at `row0`, in a grid over every sequence's blocks: `row0 / block +
/// b`. Sequence `b` needs `blocks(len, block)` blocks, at most
/// `(row0 + len) / block - row0 / block + 1`, so no two sequences' blocks
/// meet, and `total / block + batch` blocks cover a batch of `total` rows
/// (some of them, between sequences, empty).
#[inline(always)]
pub const fn first_packed_block(row0: u32, b: u32, block: u32) -> u32 {
    row0 / block + b
}

/// The packed sequence that block `x` of such a grid works for: the last
/// `b` below `batch` whose first block ([`first_packed_block`] of
/// `row0(b)`, the sequence's first row) is at most `x`. Searched 32
/// candidates a round, as a warp does it (`at_most(candidates)` answers
/// for up to 32 sequences at once which start at or before `x`, as a
/// bit mask): one round for up to 32 sequences, two for up to 1024.
/// Prefix sums that do not grow give some sequence; the block's rows are
/// clamped by its caller.
#[inline(always)]
pub fn packed_sequence(batch: u32, mut at_most: impl FnMut(u32, u32) -> u32) -> u32 {
    // The answer lies in `low .. low + span`; candidate `i` of a round is
    // `low + i * step`.
    let (mut low, mut span) = (0, batch);
    while span > 1 {
        let step = span.div_ceil(32);
        let candidates = span.div_ceil(step);
        let mask = at_most(low, step) & if candidates >= 32 { u32::MAX } else { (1 << candidates) - 1 };
        // Candidate 0 (`low`) is the answer when none is at most `x`.
        let last = if mask == 0 { 0 } else { 31 - mask.leading_zeros() };
        low += last * step;
        span = step.min(batch - low);
    }
    low
}

/// [`packed_sequence`] one candidate at a time: `starts(b)` is whether
/// sequence `b`'s first block is at most the block's: the same search as
/// the kernels' warp vote, for the CPU emulation and the tests.
#[inline(always)]
pub fn packed_sequence_serial(batch: u32, starts: impl Fn(u32) -> bool) -> u32 {
    packed_sequence(batch, |low, step| {
        (0..32).fold(0, |mask, i| {
            let b = low + i * step;
            if b < batch && starts(b) { mask | 1 << i } else { mask }
        })
    })
}

/// What one block of a [`grid`] computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockCoords {
    /// The query block (rows `block_m * query_block ..`).
    pub query_block: u32,
    /// The query head.
    pub head: u32,
    /// The batch entry.
    pub batch: u32,
}

/// The work of the block at `ctaid = (x, y, z)` of a [`grid`] with
/// `query_blocks` query blocks; heaviest first, grid block z = 0 takes the
/// last query block.
#[inline(always)]
pub const fn block_coords((x, y, z): (u32, u32, u32), query_blocks: u32, causal: bool) -> BlockCoords {
    let ordered = heaviest_first(query_blocks, causal);
    BlockCoords {
        query_block: if ordered { query_blocks - 1 - z } else { x },
        head: if ordered { x } else { y },
        batch: if ordered { y } else { z },
    }
}

/// Where query block `query_block` starts walking its `key_blocks` key
/// blocks (`split`): `query_block mod 2^k`, `2^k` the largest power of two
/// up to `key_blocks` (a mask, not a division: it sits before the first
/// copies). A head's query blocks thus ask for different key blocks first
/// instead of all for the same L2 lines at once ([`walks_rotated`] says
/// which kernels do). 0 without key blocks.
#[inline(always)]
pub const fn key_rotation(query_block: u32, key_blocks: u32) -> u32 {
    if key_blocks == 0 {
        return 0;
    }
    let power = 1 << (31 - key_blocks.leading_zeros());
    query_block & (power - 1)
}

/// Whether a `split`-family kernel walks its key blocks rotated
/// ([`key_rotation`]): only `split-n64` at D = 64, where it measured faster
/// at 512 keys with 128+ blocks; `split-n64` at D = 128 and `split`
/// measured slower with it (see lab/).
#[inline(always)]
pub const fn walks_rotated(head_dim: u32, block_n: u32) -> bool {
    head_dim == 64 && block_n == 64
}

/// The key block that position `x < key_blocks` of a walk rotated by
/// `rotation < key_blocks` ([`key_rotation`]) visits: `(x + rotation) mod
/// key_blocks`, by one conditional subtraction. A bijection of
/// `0 .. key_blocks`, so the key groups still share out every block once.
#[inline(always)]
pub const fn rotated_block(x: u32, rotation: u32, key_blocks: u32) -> u32 {
    let y = x + rotation;
    if y >= key_blocks { y - key_blocks } else { y }
}

#[cfg(test)]
mod tests {

    #[test]
    fn packed_blocks_never_meet_and_every_block_finds_its_sequence() {
        for (lens, block) in
            [(vec![0u32, 1, 63, 64, 65, 200, 3, 192, 70], 64u32), (vec![4096, 88, 0, 0, 191, 193], 192)]
        {
            let cu: Vec<u32> = core::iter::once(0)
                .chain(lens.iter().scan(0, |at, &l| {
                    *at += l;
                    Some(*at)
                }))
                .collect();
            let (batch, total) = (lens.len() as u32, *cu.last().unwrap());
            let grid = total / block + batch;
            let mut owner = vec![None; grid as usize];
            for (b, &len) in lens.iter().enumerate() {
                let first = first_packed_block(cu[b], b as u32, block);
                for nth in 0..blocks(len, block) {
                    let x = (first + nth) as usize;
                    assert!(x < grid as usize && owner[x].is_none(), "{lens:?}: block {x} twice or past the grid");
                    owner[x] = Some(b as u32);
                }
            }
            for (x, owner) in owner.iter().enumerate() {
                let starts = |b: u32| first_packed_block(cu[b as usize], b, block) <= x as u32;
                let found = packed_sequence_serial(batch, starts);
                if let Some(b) = owner {
                    assert_eq!(found, *b, "{lens:?}: block {x}");
                }
            }
        }
    }

    use super::*;

    #[test]
    fn first_masked_block_splits_the_walk_where_masks_begin() {
        for causal in [false, true] {
            for block_n in [32u32, 64] {
                for seq_q in [1u32, 5, 64, 100, 200] {
                    for seq_kv in [1u32, 63, 64, 65, 130, 200] {
                        for row_start in (0..seq_q).step_by(16) {
                            let first = first_masked_block(row_start, block_n, seq_q, seq_kv, causal);
                            for j in 0..seq_kv.div_ceil(block_n) + 2 {
                                let needs = block_needs_mask(row_start, j * block_n, block_n, seq_q, seq_kv, causal);
                                assert_eq!(j >= first, needs, "{causal} {block_n} {seq_q} {seq_kv} {row_start} {j}");
                            }
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn rotated_walks_visit_every_key_block_once() {
        for key_blocks in 1..70u32 {
            for query_block in 0..40 {
                let r = key_rotation(query_block, key_blocks);
                assert!(r < key_blocks, "{query_block} {key_blocks}");
                let mut seen = vec![false; key_blocks as usize];
                for x in 0..key_blocks {
                    let b = rotated_block(x, r, key_blocks) as usize;
                    assert!(!seen[b], "{query_block} {key_blocks}: block {b} twice");
                    seen[b] = true;
                }
            }
        }
        assert_eq!(key_rotation(13, 8), 5);
        assert_eq!(key_rotation(13, 12), 5, "within the largest power of two, 8");
        assert_eq!(key_rotation(7, 1), 0);
        assert_eq!(key_rotation(7, 0), 0);
    }

    #[test]
    fn fast_division_is_exact() {
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for d in (1..=1100).chain([1 << 20, (1 << 20) + 1, 0x7FFF_FFFF, u32::MAX]) {
            let f = FastDiv::new(d);
            let edges = (0..2000).chain([d - 1, d, d.saturating_add(1), 0x7FFF_FFFE, 0x7FFF_FFFF]);
            for n in edges.chain((0..200).map(|_| (next() as u32) >> 1)).filter(|&n| n < 1 << 31) {
                assert_eq!(f.div(n), n / d, "{n} / {d} with {f:?}");
            }
        }
        assert_eq!(FastDiv::new(0), FastDiv::new(1));
    }

    #[test]
    fn kv_heads_group_query_heads() {
        assert_eq!((0..8).map(|h| kv_head(h, 8, 2)).collect::<Vec<_>>(), [0, 0, 0, 0, 1, 1, 1, 1]);
        assert_eq!((0..6).map(|h| kv_head(h, 6, 3)).collect::<Vec<_>>(), [0, 0, 1, 1, 2, 2]);
        assert_eq!(kv_head(5, 8, 8), 5);
        assert_eq!(kv_head(5, 8, 0), 5, "an invalid ratio maps every head to itself");
    }

    #[test]
    fn block_coords_cover_the_problem_once_heaviest_first_when_causal() {
        for (query_blocks, heads, batch) in [(1u32, 1u32, 1u32), (3, 2, 2), (7, 5, 3), (64, 4, 2)] {
            for causal in [false, true] {
                let seq_q = query_blocks * 16;
                let (gx, gy, gz) = grid(16, batch, heads, seq_q, causal);
                // Dispatch order: x fastest, then y, then z.
                let order: Vec<BlockCoords> = (0..gz)
                    .flat_map(|z| (0..gy).flat_map(move |y| (0..gx).map(move |x| (x, y, z))))
                    .map(|c| block_coords(c, query_blocks, causal))
                    .collect();
                let mut seen: Vec<(u32, u32, u32)> = order.iter().map(|c| (c.batch, c.head, c.query_block)).collect();
                seen.sort();
                let all: Vec<(u32, u32, u32)> = (0..batch)
                    .flat_map(|b| (0..heads).flat_map(move |h| (0..query_blocks).map(move |q| (b, h, q))))
                    .collect();
                assert_eq!(seen, all, "every (batch, head, query block) exactly once");
                if causal {
                    assert!(
                        order.windows(2).all(|w| w[0].query_block >= w[1].query_block),
                        "causal blocks start heaviest (latest query block) first across heads"
                    );
                }
            }
        }
        let too_many = MAX_GRID_YZ + 1;
        assert_eq!(
            grid(1, 2, 3, too_many, true),
            (too_many, 3, 2),
            "a grid that does not fit keeps x for query blocks"
        );
        assert_eq!(block_coords((5, 1, 0), too_many, true), BlockCoords { query_block: 5, head: 1, batch: 0 });
    }

    #[test]
    fn key_end_is_the_last_rows_limit() {
        // Sq = 4, Skv = 6: row i sees keys 0 ..= i + 2.
        assert_eq!(key_end(0, 1, 4, 6, true), 3);
        assert_eq!(key_end(0, 4, 4, 6, true), 6);
        assert_eq!(key_end(2, 64, 4, 6, true), 6);
        // Sq = 6, Skv = 2: rows 0 ..= 3 see nothing.
        assert_eq!(key_end(0, 4, 6, 2, true), 0);
        assert_eq!(key_end(0, 5, 6, 2, true), 1);
        assert_eq!(key_end(0, 1, 6, 2, false), 2);
    }
}
