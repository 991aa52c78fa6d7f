//! The kernel argument block, shared bit for bit by host and device.

use crate::schedule::FastDiv;
use crate::window::KeyWindow;

/// Everything a forward kernel needs, passed by value as one kernel parameter.
///
/// Tensors are contiguous row-major: Q `[batch, heads_q, seq_q, HEAD_DIM]`,
/// K and V `[batch, heads_kv, seq_kv, HEAD_DIM]` as E4M3 bytes, O
/// `[batch, heads_q, seq_q, HEAD_DIM]` as f16 bits. The scales are device
/// pointers to f32 arrays (real value = fp8 value * scale), laid out as
/// [`AttnParams::scale_batch_stride`] says: per head, `q_scale[heads_q]`,
/// `k_scale[heads_kv]`, `v_scale[heads_kv]`; or per (batch, key/value head),
/// each `[batch, heads_kv]` (FlashAttention-3's descales: a query head takes
/// its key/value head's Q scale).
/// The host validates every field before a launch; the kernels trust them.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct AttnParams {
    /// Device address of Q (E4M3).
    pub q: u64,
    /// Device address of K (E4M3).
    pub k: u64,
    /// Device address of V (E4M3).
    pub v: u64,
    /// Device address of O (f16).
    pub o: u64,
    /// Device address of the per-head Q dequantization scales (f32).
    pub q_scale: u64,
    /// Device address of the per-head K dequantization scales (f32).
    pub k_scale: u64,
    /// Device address of the per-head V dequantization scales (f32).
    pub v_scale: u64,
    /// Device address of the scratch the `kv_tiles` prepass fills for the
    /// kernels that read it (0 for the others): every key/value head's
    /// `Vt` (V transposed, to f16 or as E4M3) cut into 64-key tiles, each
    /// already in the shared-memory layout the `wgmma` kernel reads, so
    /// one bulk copy moves a tile (see [`KvTiles`]).
    pub kv_tiles: u64,
    /// Batch size B.
    pub batch: u32,
    /// Query heads Hq.
    pub heads_q: u32,
    /// Key/value heads Hkv (`heads_q % heads_kv == 0`).
    pub heads_kv: u32,
    /// Query length Sq.
    pub seq_q: u32,
    /// Key/value length Skv.
    pub seq_kv: u32,
    /// The softmax scale applied to Q·K^T (before the dequantization scales).
    pub softmax_scale: f32,
    /// 1 for causal (bottom-right aligned) masking, 0 for none.
    pub causal: u32,
    /// Query head -> key/value head: `schedule::kv_group(heads_q, heads_kv)`.
    pub kv_group: FastDiv,
    /// Device address of the problem's [`TileMaps`] (64-byte aligned) for
    /// the kernels that copy their tiles by tensor copies (on sm_90a the
    /// `split` family's Q, K and V, `wgmma`'s K at D = 64); 0 where none
    /// were made.
    pub tile_maps: u64,
    /// Scales between one batch's and the next's in each scale array: 0
    /// for one scale per head shared by the batch (Q's indexed by query
    /// head, K's and V's by key/value head), `heads_kv` for one per (batch,
    /// key/value head) (all three indexed by `batch * heads_kv + kv head`,
    /// see [`scale_index`]).
    pub scale_batch_stride: u32,
    /// `decode` only: how many blocks share each (query block, key/value
    /// head)'s keys, `split_keys` each ([`DecodeSplits`]); 1 where one block
    /// walks them all and stores O itself. Other kernels ignore it.
    pub kv_splits: u32,
    /// `decode` only: keys per split, a multiple of the kernel's key block.
    pub split_keys: u32,
    /// `decode` only: `seq_q` as a division (a folded row's query head and
    /// position, see [`DecodeSplits`]).
    pub seq_q_div: FastDiv,
    /// `decode` only: `heads_kv` as a division (a folded head's batch).
    pub heads_kv_div: FastDiv,
    /// `decode` with `kv_splits > 1`: device address of the partial results
    /// ([`DecodeSplits`]), which the merge kernel combines; else 0.
    pub partials: u64,
    /// Device address of the f32 log-sum-exp output `[batch, heads_q,
    /// seq_q]` (natural log of each row's sum of `exp(softmax_scale *
    /// q.k)`; `-inf` for a row that sees no key), or 0 for none (`decode`
    /// and its merge write it).
    pub lse: u64,
    /// `decode` only: device address of `batch` int32 key lengths (each
    /// batch's keys are its first `seq_used_k[b]` rows, clamped to `0 ..=
    /// seq_kv`; causal masking aligns to that length), or 0 for `seq_kv`
    /// everywhere.
    pub seq_used_k: u64,
    /// `decode` only: device address of the page table, int32 `[batch,
    /// max_pages]` (batch `b`'s keys `page_size * i ..` live in page
    /// `table[b][i]`), or 0 for contiguous K and V. Paged, K and V are
    /// `[pages, page_size, heads_kv, HEAD_DIM]` (FlashAttention's paged
    /// cache), `seq_kv = max_pages * page_size`, and a page index outside
    /// `0 .. pages` is clamped into it.
    pub page_table: u64,
    /// Entries per batch of the page table.
    pub max_pages: u32,
    /// `log2(page_size)`: pages are a power of two of keys, at least one
    /// key block.
    pub page_shift: u32,
    /// Pages in K's and V's pool.
    pub pages: u32,
    /// Packed variable-length batches (the `wgmma` kernels' packed twins):
    /// device address of `batch + 1` int32 prefix sums of the sequences'
    /// query lengths (`cu_seqlens_q`, from 0). Packed, Q and O are
    /// `[total_q, heads_q, HEAD_DIM]` and K and V `[total_k, heads_kv,
    /// HEAD_DIM]` (sequence `b`'s rows are `cu_seqlens[b] .. cu_seqlens[b +
    /// 1]`), `seq_q` and `seq_kv` are the longest sequence's lengths, and
    /// causal masking aligns each sequence's last query with its last key
    /// ([`PackedRows`]). 0 in the packed twins for a batch of equal lengths
    /// in `[batch, seq, heads, HEAD_DIM]` tensors ([`PackedRows::uniform`]:
    /// `total_q = batch * seq_q`); 0 in the other kernels, whose tensors are
    /// `[batch, heads, seq, HEAD_DIM]`.
    pub cu_seqlens_q: u64,
    /// Packed: device address of the `batch + 1` key prefix sums
    /// (`cu_seqlens_k`); 0 where `cu_seqlens_q` is.
    pub cu_seqlens_k: u64,
    /// Packed (with prefix sums or of equal lengths): rows of K and V
    /// (`total_k`), which the prepass's scratch is sized by
    /// ([`KvTiles::packed`]); `decode`: `batch * seq_kv` for a `[batch,
    /// seq_kv, heads_kv, HEAD_DIM]` cache; 0 for `[batch, heads, seq,
    /// HEAD_DIM]` tensors.
    pub packed_keys: u32,
    /// Packed: rows of Q and O (`total_q`); the log-sum-exp output is then
    /// `[heads_q, total_q]` (FlashAttention's packed layout).
    pub packed_queries: u32,
    /// The window entries (`kernels::ScoreTwins`): keys before a row's
    /// position that it sees (`window::KeyWindow::left`, causal masking
    /// folded in by the host). Other kernels ignore it.
    pub window_left: u32,
    /// The window entries: keys after a row's position that it sees
    /// (`window::KeyWindow::right`).
    pub window_right: u32,
    /// The softcap entries: scores `s` become `softcap * tanh(s /
    /// softcap)` before the softmax (above 0, at most
    /// `window::MAX_SOFTCAP`). Other kernels ignore it.
    pub softcap: f32,
    /// Where Q's rows lie where rows interleave heads (the packed twins,
    /// `[batch, seq, heads, HEAD_DIM]` tensors): [`RowStrides::dense`] or
    /// the caller's strides. O stays dense. `[batch, heads, seq,
    /// HEAD_DIM]` kernels and `decode` ignore it.
    pub q_strides: RowStrides,
    /// Where K's and V's rows lie where rows interleave heads (the packed
    /// twins' prepass and K maps, `decode`'s `[batch, seq_kv, heads_kv,
    /// HEAD_DIM]` or paged cache); K and V share them.
    pub kv_strides: RowStrides,
}

impl AttnParams {
    /// The window the window entries read (`window_left`, `window_right`).
    #[inline(always)]
    pub fn window(&self) -> KeyWindow {
        KeyWindow { left: self.window_left, right: self.window_right }
    }
}

/// Where the rows of a `[rows, heads, HEAD_DIM]` E4M3 tensor lie (a packed
/// batch's, or `[batch, seq, heads, HEAD_DIM]` read as `batch * seq`
/// rows): bytes from one row to the next and from one head to the next, the
/// last dimension contiguous. Slices of a fused projection, e.g. Q of a
/// `[batch, seq, 3, heads, HEAD_DIM]` QKV, are rows `3 * heads * HEAD_DIM`
/// apart. Both are multiples of 16 (host-validated), as `cp.async` and the
/// bulk and tensor copies need.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RowStrides {
    /// Bytes from one row (position) to the next.
    pub row: u32,
    /// Bytes from one head to the next within a row.
    pub head: u32,
}

impl RowStrides {
    /// Rows of `heads` heads of `head_dim` bytes, packed without gaps.
    pub const fn dense(heads: u32, head_dim: u32) -> Self {
        Self { row: heads * head_dim, head: head_dim }
    }

    /// Where head `head` of row `row` starts (bytes; a head's offset
    /// within a row fits 32 bits, host-validated).
    #[inline(always)]
    pub const fn offset(self, row: u32, head: u32) -> u64 {
        row as u64 * self.row as u64 + (head * self.head) as u64
    }
}

/// Where one sequence of a packed batch ([`AttnParams::cu_seqlens_q`])
/// lies: its first row and length in Q (and O), and in K (and V).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PackedRows {
    /// First query row.
    pub q_row0: u32,
    /// Query rows.
    pub seq_q: u32,
    /// First key row.
    pub kv_row0: u32,
    /// Key rows.
    pub seq_kv: u32,
}

impl PackedRows {
    /// Each row and length through `f` (e.g. `arch::shfl::uniform`).
    #[inline(always)]
    pub fn map(self, f: impl Fn(u32) -> u32) -> Self {
        PackedRows { q_row0: f(self.q_row0), seq_q: f(self.seq_q), kv_row0: f(self.kv_row0), seq_kv: f(self.seq_kv) }
    }

    /// Sequence `b` of `p` from the prefix sums' entries `b` and `b + 1`
    /// (`[q_b, q_b1]`, `[k_b, k_b1]`), clamped so that no value the host
    /// could not check reads past a tensor or the launch's geometry: a
    /// first row past the total starts at it, a decreasing pair is empty,
    /// a sequence ends at the total and is cut at the longest length
    /// (`seq_q`, `seq_kv`).
    #[inline(always)]
    pub fn of(p: &AttnParams, [q_b, q_b1]: [u32; 2], [k_b, k_b1]: [u32; 2]) -> Self {
        let rows = |first: u32, next: u32, total: u32, longest: u32| {
            let first = first.min(total);
            (first, next.min(total).saturating_sub(first).min(longest))
        };
        let (q_row0, seq_q) = rows(q_b, q_b1, p.packed_queries, p.seq_q);
        let (kv_row0, seq_kv) = rows(k_b, k_b1, p.packed_keys, p.seq_kv);
        Self { q_row0, seq_q, kv_row0, seq_kv }
    }

    /// Sequence `b` of a batch of equal lengths, `seq_q` queries and
    /// `seq_kv` keys each, in `[batch, seq, heads, HEAD_DIM]` tensors: the
    /// packed layout without prefix sums ([`AttnParams::cu_seqlens_q`] 0).
    #[inline(always)]
    pub const fn uniform(p: &AttnParams, b: u32) -> Self {
        Self { q_row0: b * p.seq_q, seq_q: p.seq_q, kv_row0: b * p.seq_kv, seq_kv: p.seq_kv }
    }
}

/// Where `decode`'s blocks that share keys leave their partial results
/// for the merge kernel, at [`AttnParams::partials`]. The query heads that
/// read one key/value head are folded into one head of `fold_rows =
/// (heads_q / heads_kv) * seq_q` rows (row `r`: query head `r / seq_q` of
/// the group, position `r % seq_q`; in `[B, Hq, Sq, D]` those rows are
/// contiguous), so a block reads each K/V byte once for all of them. Per
/// folded head (`batch * heads_kv + kv head`), split and row: the row's
/// output over the split's keys, normalized and dequantized (f32,
/// `head_dim` values), then, after every output row, the split's softmax
/// statistics of the row ([`DecodeSplits::stats`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DecodeSplits {
    /// Head dimension D.
    pub head_dim: u32,
    /// Rows per folded head: `heads_q / heads_kv * seq_q`.
    pub fold_rows: u32,
    /// Splits per folded head.
    pub splits: u32,
    /// Folded heads over the batch: `batch * heads_kv`.
    pub heads: u64,
}

impl DecodeSplits {
    /// The partial-result layout of a problem split `splits` ways.
    #[inline(always)]
    pub const fn new(head_dim: u32, batch: u32, heads_q: u32, heads_kv: u32, seq_q: u32, splits: u32) -> Self {
        let group = match heads_q.checked_div(heads_kv) {
            Some(g) => g,
            None => 1,
        };
        Self { head_dim, fold_rows: group * seq_q, splits, heads: batch as u64 * heads_kv as u64 }
    }

    /// Index of row `row` of split `split` of folded head `head` among all
    /// partial rows.
    #[inline(always)]
    pub const fn row(&self, head: u64, split: u32, row: u32) -> u64 {
        (head * self.splits as u64 + split as u64) * self.fold_rows as u64 + row as u64
    }

    /// Partial rows in all.
    #[inline(always)]
    pub const fn rows(&self) -> u64 {
        self.heads * self.splits as u64 * self.fold_rows as u64
    }

    /// Byte offset of a partial row's output (`head_dim` f32).
    #[inline(always)]
    pub const fn output(&self, head: u64, split: u32, row: u32) -> u64 {
        self.row(head, split, row) * self.head_dim as u64 * 4
    }

    /// Byte offset of a partial row's softmax statistics: its base-2
    /// maximum (0 where the split saw no key of the row) and its sum
    /// relative to that maximum (two f32). Kept apart, not as one
    /// log-sum-exp: at scores of 2^24 and more the maximum's ulp exceeds
    /// the sum's log, which would drop how many keys each split weighs.
    #[inline(always)]
    pub const fn stats(&self, head: u64, split: u32, row: u32) -> u64 {
        self.rows() * self.head_dim as u64 * 4 + self.row(head, split, row) * 8
    }

    /// Bytes of the whole area (0 for one split: nothing to merge).
    #[inline(always)]
    pub const fn total_bytes(&self) -> u64 {
        if self.splits <= 1 { 0 } else { self.rows() * (self.head_dim as u64 + 2) * 4 }
    }
}

/// Where a block's Q and K/V scales sit in their arrays (`(q, kv)`), for
/// query head `head` of key/value head `kv_head` in batch `batch`, under
/// [`AttnParams::scale_batch_stride`] `stride`.
#[inline(always)]
pub const fn scale_index(stride: u32, batch: u32, head: u32, kv_head: u32) -> (u32, u32) {
    let kv = batch * stride + kv_head;
    (if stride == 0 { head } else { kv }, kv)
}

/// The tensor maps (`cuTensorMapEncodeTiled` descriptors, 128 bytes each)
/// through which `split` copies its Q, K and V tiles on sm_90a (and
/// `wgmma` its K tiles), in global
/// memory at [`AttnParams::tile_maps`]. Each describes its tensor as three
/// dimensions, innermost first: `HEAD_DIM` bytes, the sequence (`seq_q` or
/// `seq_kv`), the heads over the batch (`batch * heads_q` or `batch *
/// heads_kv`); a box is one block's rows of one head (`HEAD_DIM` x
/// `block_m` or `block_n` x 1), swizzled as `layout::RowLayout::Swizzled`;
/// rows past the sequence arrive as zeros.
#[repr(C, align(128))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TileMaps {
    /// Q's tensor map.
    pub q: [u64; 16],
    /// K's tensor map.
    pub k: [u64; 16],
    /// V's tensor map.
    pub v: [u64; 16],
}

impl TileMaps {
    /// Bytes from the start of the maps to K's.
    pub const K_OFFSET: u64 = 128;
    /// Bytes from the start of the maps to V's.
    pub const V_OFFSET: u64 = 256;
}

/// Keys per tile of the [`KvTiles`] scratch.
pub const TILE_KEYS: u32 = 64;

/// `seq_kv` rounded up to whole [`TILE_KEYS`]-key tiles (the padding keys
/// are zeros in the scratch).
#[inline(always)]
pub const fn padded_keys(seq_kv: u32) -> u32 {
    seq_kv.div_ceil(TILE_KEYS) * TILE_KEYS
}

/// Threads per block of the `kv_tiles` prepass at head dimension
/// `head_dim`: one per 4 V columns and 8 keys of a 64-key tile.
#[inline(always)]
pub const fn kv_tiles_threads(head_dim: u32) -> u32 {
    head_dim / 4 * (TILE_KEYS / 8)
}

/// Bytes per key of a `Vt` row: 1 where `wgmma`'s P·V multiplies E4M3 P
/// by E4M3 V (`kernels::Variant::WgmmaFp8Pv`: V's own bytes), 2 where it
/// multiplies f16 P by f16 V (`wgmma`: V converted, exactly).
#[inline(always)]
pub const fn vt_key_bytes(pv_e4m3: bool) -> u32 {
    if pv_e4m3 { 1 } else { 2 }
}

/// Where the `kv_tiles` prepass puts each tile in the scratch at
/// [`AttnParams::kv_tiles`]: every `Vt` tile, ordered by key/value head
/// over the batch (`batch * heads_kv + head`), then by tile. A `Vt` tile is
/// `HEAD_DIM` rows of 64 f16 keys (64 E4M3 keys for `wgmma-fp8pv`,
/// [`vt_key_bytes`]) in the `wgmma` core-matrix layout
/// (`layout::RowLayout::CoreMatrices`), exactly as it sits in shared
/// memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KvTiles {
    /// Head dimension D.
    pub head_dim: u32,
    /// Bytes per key of a `Vt` row ([`vt_key_bytes`]).
    pub vt_key_bytes: u32,
    /// Tiles per key/value head: `padded_keys(seq_kv) / 64`.
    pub tiles_per_head: u32,
    /// Key/value heads over the batch: `batch * heads_kv`.
    pub heads: u64,
}

impl KvTiles {
    /// The scratch layout of a problem, for a P·V in E4M3 (`pv_e4m3`) or f16.
    #[inline(always)]
    pub const fn new(head_dim: u32, batch: u32, heads_kv: u32, seq_kv: u32, pv_e4m3: bool) -> Self {
        Self {
            head_dim,
            vt_key_bytes: vt_key_bytes(pv_e4m3),
            tiles_per_head: padded_keys(seq_kv) / TILE_KEYS,
            heads: batch as u64 * heads_kv as u64,
        }
    }

    /// The scratch layout of a packed batch ([`AttnParams::cu_seqlens_k`])
    /// of `batch` sequences and `total_keys` key rows: per key/value head
    /// (not per batch entry), sequence `b`'s tiles from
    /// [`KvTiles::first_packed_tile`] on. No sequence's tiles overlap the
    /// next's: sequence `b` needs `ceil(len / 64)` tiles, at most
    /// `floor((k_b + len) / 64) - floor(k_b / 64) + 1`.
    #[inline(always)]
    pub const fn packed(head_dim: u32, batch: u32, heads_kv: u32, total_keys: u32, pv_e4m3: bool) -> Self {
        Self {
            head_dim,
            vt_key_bytes: vt_key_bytes(pv_e4m3),
            tiles_per_head: total_keys / TILE_KEYS + batch,
            heads: heads_kv as u64,
        }
    }

    /// The scratch layout of `p` at head dimension `head_dim`: packed (with
    /// prefix sums or of equal lengths) or per batch entry.
    #[inline(always)]
    pub const fn of(p: &AttnParams, head_dim: u32, pv_e4m3: bool) -> Self {
        if p.packed_keys != 0 {
            Self::packed(head_dim, p.batch, p.heads_kv, p.packed_keys, pv_e4m3)
        } else {
            Self::new(head_dim, p.batch, p.heads_kv, p.seq_kv, pv_e4m3)
        }
    }

    /// The first tile of packed sequence `batch` whose keys start at row
    /// `kv_row0` (see [`KvTiles::packed`]).
    #[inline(always)]
    pub const fn first_packed_tile(kv_row0: u32, batch: u32) -> u32 {
        crate::schedule::first_packed_block(kv_row0, batch, TILE_KEYS)
    }

    /// Bytes of one `Vt` tile.
    #[inline(always)]
    pub const fn vt_tile_bytes(&self) -> u32 {
        self.head_dim * TILE_KEYS * self.vt_key_bytes
    }

    /// Byte offset of tile `tile` of head `head`'s `Vt`.
    #[inline(always)]
    pub const fn vt_tile(&self, head: u64, tile: u32) -> u64 {
        (head * self.tiles_per_head as u64 + tile as u64) * self.vt_tile_bytes() as u64
    }

    /// Bytes of the whole scratch.
    #[inline(always)]
    pub const fn total_bytes(&self) -> u64 {
        self.vt_tile(self.heads, 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scales_per_head_ignore_the_batch_per_batch_head_follow_the_kv_head() {
        // Per head: Q by query head 5, K/V by key/value head 2, any batch.
        assert_eq!(scale_index(0, 3, 5, 2), (5, 2));
        // Per (batch, key/value head) with 4 key/value heads: Q shares K's entry.
        assert_eq!(scale_index(4, 3, 5, 2), (14, 14));
        assert_eq!(scale_index(4, 0, 1, 0), (0, 0));
    }

    #[test]
    fn kv_tiles_are_packed_without_overlap() {
        for head_dim in [64u32, 128] {
            let t = KvTiles::new(head_dim, 2, 3, 130, false);
            assert_eq!((t.tiles_per_head, t.heads), (3, 6));
            assert_eq!(t.vt_tile(0, 0), 0);
            // Each tile starts where the one before it (same head, then next head) ends.
            assert_eq!(t.vt_tile(0, 1), t.vt_tile_bytes() as u64);
            assert_eq!(t.vt_tile(1, 0), 3 * t.vt_tile_bytes() as u64);
            assert_eq!(t.vt_tile(5, 2) % 16, 0);
            // D f16 rows of 64 keys: 2 bytes per padded key and column.
            assert_eq!(t.vt_tile(5, 2) + t.vt_tile_bytes() as u64, t.total_bytes());
            assert_eq!(t.total_bytes(), 6 * padded_keys(130) as u64 * head_dim as u64 * 2);
        }
    }
}
