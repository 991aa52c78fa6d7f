//! Shared-memory layouts of tiles and the `wgmma` matrix descriptor: pure
//! index math, built for the host too so the tests check it.

/// Bytes of one `wgmma` core matrix: 8 rows of 16 bytes, contiguous.
pub const CORE_MATRIX_BYTES: u32 = 128;

/// How the rows of a tile are laid out in shared memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RowLayout {
    /// Plain rows `stride` bytes apart (`stride` = row bytes + padding, so the
    /// 8 rows an `ldmatrix` reads fall in distinct banks).
    Padded {
        /// Bytes from one row to the next.
        stride: u32,
    },
    /// The `wgmma` no-swizzle ("interleaved") K-major layout: the tile is cut
    /// into 8-row x 16-byte core matrices, each 128 contiguous bytes, ordered
    /// along the row first: core matrix `(row / 8, byte / 16)` sits at
    /// `((row / 8) * (row_bytes / 16) + byte / 16) * 128`.
    CoreMatrices {
        /// Bytes of one row of the tile (a multiple of 16).
        row_bytes: u32,
    },
    /// Plain rows of `row_bytes` (64 or 128) with each 16-byte chunk moved
    /// as a tensor copy's 64- or 128-byte swizzle mode puts it: chunk `c`
    /// of row `r` at chunk `c ^ ((r / 2) % 4)` (64-byte rows) or `c ^ (r %
    /// 8)` (128-byte rows), i.e. address bits 4.. XOR bits 7.. of the
    /// offset, for a tile that starts at a multiple of 1024 bytes. The 8
    /// rows an `ldmatrix` reads at one chunk then hit 8 distinct banks.
    Swizzled {
        /// Bytes of one row: 64 or 128.
        row_bytes: u32,
    },
    /// 64-byte rows (a D = 64 tile of E4M3 rows) copied two to a 128-byte
    /// row under the 128-byte swizzle: a tensor copy of the same bytes seen
    /// as rows of 128 (`launch::encode_tile_map`'s pair rows). Row `r`'s
    /// plain offset is `64 r + byte`, as in a plain tile; chunk bits 4..7
    /// of it XOR bits 7..10 (`Swizzled { row_bytes: 128 }`'s rule on the
    /// pair row `r / 2`). The 8 rows an `ldmatrix` reads at one chunk are 4
    /// pair rows x 2 halves: 8 distinct 16-byte bank groups.
    SwizzledPairs,
}

impl RowLayout {
    /// Offset of byte `byte` of row `row` (for `CoreMatrices`, `byte` and the
    /// 16-byte chunk it starts must not straddle a core matrix).
    #[inline(always)]
    pub const fn offset(self, row: u32, byte: u32) -> u32 {
        match self {
            RowLayout::Padded { stride } => row * stride + byte,
            RowLayout::CoreMatrices { row_bytes } => {
                ((row / 8) * (row_bytes / 16) + byte / 16) * CORE_MATRIX_BYTES + (row % 8) * 16 + byte % 16
            }
            RowLayout::Swizzled { row_bytes } => {
                let plain = row * row_bytes + byte;
                // The 16-byte chunks of one swizzle row (128 bytes) number row_bytes / 16.
                let chunk_mask = row_bytes / 16 - 1;
                plain ^ (((plain >> 7) & chunk_mask) << 4)
            }
            RowLayout::SwizzledPairs => {
                let plain = row * 64 + byte;
                plain ^ (((plain >> 7) & 7) << 4)
            }
        }
    }
}

/// A `wgmma` shared-memory matrix descriptor without swizzling:
/// start address, leading-dimension byte offset (between core matrices
/// adjacent along K) and stride-dimension byte offset (between core matrices
/// adjacent along M or N), each stored `>> 4` in 14 bits; swizzle mode 0.
#[inline(always)]
pub const fn gmma_desc(smem_addr: u32, leading_bytes: u32, stride_bytes: u32) -> u64 {
    desc_field(smem_addr) | (desc_field(leading_bytes) << 16) | (desc_field(stride_bytes) << 32)
}

/// A byte quantity as a descriptor field: `>> 4`, 14 bits.
#[inline(always)]
const fn desc_field(bytes: u32) -> u64 {
    ((bytes >> 4) & 0x3FFF) as u64
}

/// The descriptor of a K-major tile in [`RowLayout::CoreMatrices`] whose rows
/// are `row_bytes` long, starting at row `row0` (a multiple of 8) and at K
/// byte `k_byte0` (a multiple of 16).
#[inline(always)]
pub const fn kmajor_desc(tile_addr: u32, row_bytes: u32, row0: u32, k_byte0: u32) -> u64 {
    let layout = RowLayout::CoreMatrices { row_bytes };
    gmma_desc(tile_addr + layout.offset(row0, k_byte0), CORE_MATRIX_BYTES, (row_bytes / 16) * CORE_MATRIX_BYTES)
}

/// `desc` (a descriptor of [`gmma_desc`]'s form) moved `bytes` further
/// in shared memory: one add on the start-address field instead of a new
/// descriptor (no carry leaves the field while the new start address stays
/// below 256 KB, which every block's shared memory does).
#[inline(always)]
pub const fn desc_advanced(desc: u64, bytes: u32) -> u64 {
    desc + (bytes >> 4) as u64
}

/// The `wgmma` descriptor of a K-major tile in [`RowLayout::Swizzled`] rows
/// of `row_bytes` (64 or 128: the 64- or 128-byte swizzle mode, the tile at
/// a multiple of 1024 bytes), starting at K byte `k_byte0` (a multiple of
/// 16 inside the row): 8-row groups `8 * row_bytes` apart along M or N; the
/// leading offset is unused (one swizzled row spans the tile's K), so 16.
#[inline(always)]
pub const fn swizzled_kmajor_desc(tile_addr: u32, row_bytes: u32, k_byte0: u32) -> u64 {
    let mode: u64 = if row_bytes == 128 { 1 } else { 2 };
    gmma_desc(tile_addr + k_byte0, 16, 8 * row_bytes) | (mode << 62)
}

/// `wgmma-fp8pv`'s key order in its E4M3 `Vt` rows: inside each 32-key
/// half of a key block, row byte `16h + 4q + 2a + e` holds key
/// `8(2h + a) + 2q + e`. P's `wgmma` accumulator gives the lanes of quad
/// position `q` keys `8j + 2q + e` of each 8-key tile `j`, and the E4M3
/// `m64nNk32` A operand wants K positions `4q .. 4q + 3` and `16 + 4q ..`
/// in a lane's registers; in this order both are the same keys, so every
/// A register packs four of the lane's own elements
/// ([`fp8_pv_source`]) and no value crosses lanes.
#[inline(always)]
pub const fn fp8_pv_key(byte: u32) -> u32 {
    let (half, k) = (byte / 32, byte % 32);
    let (h, q, a, e) = (k / 16, (k / 4) % 4, (k / 2) % 2, k % 2);
    32 * half + 8 * (2 * h + a) + 2 * q + e
}

/// The row byte of key `key` in [`fp8_pv_key`]'s order (its inverse).
#[inline(always)]
pub const fn fp8_pv_byte(key: u32) -> u32 {
    let (half, k) = (key / 32, key % 32);
    let (j, q, e) = (k / 8, (k % 8) / 2, k % 2);
    32 * half + 16 * (j / 2) + 4 * q + 2 * (j % 2) + e
}

/// The accumulator element of P (8-key tile, element 0..3 of the `mma`
/// accumulator layout) that byte `i` of register `r` of the E4M3 A operand
/// of 32-key half `kk` takes, in [`fp8_pv_key`]'s order: registers 0 and
/// 2 are the lane's first row, 1 and 3 its row + 8.
#[inline(always)]
pub const fn fp8_pv_source(kk: u32, r: u32, i: u32) -> (u32, u32) {
    (4 * kk + 2 * (r / 2) + i / 2, 2 * (r % 2) + i % 2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_advanced_descriptor_is_the_descriptor_of_the_moved_tile() {
        for (addr, bytes) in [(0u32, 4096u32), (1024, 8192), (57_344, 65_536), (16, 229_360)] {
            let moved = desc_advanced(kmajor_desc(addr, 128, 8, 32), bytes);
            assert_eq!(moved, kmajor_desc(addr + bytes, 128, 8, 32));
        }
        // Swizzled tiles move by whole 1024-byte swizzle periods.
        for (addr, bytes, row_bytes) in [(8192u32, 4096u32, 64u32), (24_576, 8192, 128), (8192, 12_288, 64)] {
            for k_byte in [0, 32, 96] {
                let moved = desc_advanced(swizzled_kmajor_desc(addr, row_bytes, k_byte), bytes);
                assert_eq!(moved, swizzled_kmajor_desc(addr + bytes, row_bytes, k_byte));
            }
        }
    }

    #[test]
    fn core_matrix_layout_is_a_bijection_onto_the_tile() {
        for row_bytes in [64u32, 128, 256] {
            let layout = RowLayout::CoreMatrices { row_bytes };
            let rows = 64;
            let mut seen = vec![false; (rows * row_bytes) as usize];
            for r in 0..rows {
                for b in 0..row_bytes {
                    let at = layout.offset(r, b) as usize;
                    assert!(!seen[at], "offset {at} hit twice");
                    seen[at] = true;
                }
            }
            assert!(seen.iter().all(|&x| x));
        }
    }

    #[test]
    fn swizzled_rows_are_a_bijection_and_conflict_free_for_ldmatrix() {
        for row_bytes in [64u32, 128] {
            let layout = RowLayout::Swizzled { row_bytes };
            let rows = 32;
            let mut seen = vec![false; (rows * row_bytes) as usize];
            for r in 0..rows {
                for b in 0..row_bytes {
                    let at = layout.offset(r, b) as usize;
                    assert!(!seen[at], "offset {at} hit twice");
                    assert_eq!(at as u32 / row_bytes, r, "a row stays in its own bytes");
                    seen[at] = true;
                }
            }
            // 8 consecutive rows read at one 16-byte chunk: 8 distinct 16-byte bank groups.
            for r0 in (0..rows).step_by(8) {
                for chunk in 0..row_bytes / 16 {
                    let mut groups: Vec<u32> = (r0..r0 + 8).map(|r| (layout.offset(r, 16 * chunk) / 16) % 8).collect();
                    groups.sort();
                    groups.dedup();
                    assert_eq!(groups.len(), 8, "row_bytes {row_bytes}, rows {r0}.., chunk {chunk}");
                }
            }
        }
        // The 64-byte mode: chunk c of row r at c ^ ((r / 2) % 4).
        let layout = RowLayout::Swizzled { row_bytes: 64 };
        assert_eq!(layout.offset(2, 0), 128 + 16);
        assert_eq!(layout.offset(7, 16), 7 * 64 + 16 * (1 ^ 3));
        // The 128-byte mode: chunk c of row r at c ^ (r % 8).
        let layout = RowLayout::Swizzled { row_bytes: 128 };
        assert_eq!(layout.offset(5, 32 + 3), 5 * 128 + 16 * (2 ^ 5) + 3);
    }

    #[test]
    fn swizzled_pairs_are_the_128_byte_swizzle_of_pair_rows_and_conflict_free() {
        let pairs = RowLayout::SwizzledPairs;
        let wide = RowLayout::Swizzled { row_bytes: 128 };
        let rows = 64;
        let mut seen = vec![false; (rows * 64) as usize];
        for r in 0..rows {
            for b in 0..64 {
                let at = pairs.offset(r, b);
                // Where a tensor copy of 128-byte rows puts byte 64 (r % 2) + b of pair row r / 2.
                assert_eq!(at, wide.offset(r / 2, 64 * (r % 2) + b), "row {r}, byte {b}");
                assert!(!seen[at as usize], "offset {at} hit twice");
                seen[at as usize] = true;
            }
        }
        for r0 in (0..rows).step_by(8) {
            for chunk in 0..4 {
                let mut groups: Vec<u32> = (r0..r0 + 8).map(|r| (pairs.offset(r, 16 * chunk) / 16) % 8).collect();
                groups.sort();
                groups.dedup();
                assert_eq!(groups.len(), 8, "rows {r0}.., chunk {chunk}");
            }
        }
    }

    #[test]
    fn core_matrices_are_128_contiguous_bytes_of_8_rows() {
        let layout = RowLayout::CoreMatrices { row_bytes: 64 };
        // Row r, bytes 0..16 of a core matrix are bytes 16 r .. 16 r + 16 of it.
        for r in 0..8 {
            for b in 0..16 {
                assert_eq!(layout.offset(r, b), 16 * r + b);
            }
        }
        // The next core matrix along K follows at 128 bytes; along rows at (64 / 16) * 128.
        assert_eq!(layout.offset(0, 16), 128);
        assert_eq!(layout.offset(8, 0), 4 * 128);
    }

    #[test]
    fn descriptor_fields_are_packed_as_ptx_specifies() {
        let d = gmma_desc(0x1230, 128, 1024);
        assert_eq!(d & 0x3FFF, 0x123);
        assert_eq!((d >> 16) & 0x3FFF, 128 >> 4);
        assert_eq!((d >> 32) & 0x3FFF, 1024 >> 4);
        assert_eq!(d >> 62, 0, "no swizzle");
        let k = kmajor_desc(0x400, 128, 64, 32);
        assert_eq!(k & 0x3FFF, (0x400 + (64 / 8) * (128 / 16) * 128 + 2 * 128) >> 4);
    }

    #[test]
    fn swizzled_descriptors_name_the_mode_and_the_8_row_stride() {
        // 64-byte rows: mode 2 (64-byte swizzle), 8 rows = 512 bytes apart.
        let d = swizzled_kmajor_desc(0x2000, 64, 32);
        assert_eq!(d & 0x3FFF, (0x2000 + 32) >> 4);
        assert_eq!((d >> 16) & 0x3FFF, 1);
        assert_eq!((d >> 32) & 0x3FFF, 512 >> 4);
        assert_eq!(d >> 62, 2);
        // 128-byte rows: mode 1 (128-byte swizzle), 1024 bytes apart.
        let d = swizzled_kmajor_desc(0x2000, 128, 96);
        assert_eq!(d & 0x3FFF, (0x2000 + 96) >> 4);
        assert_eq!((d >> 32) & 0x3FFF, 1024 >> 4);
        assert_eq!(d >> 62, 1);
    }

    #[test]
    fn fp8_pv_key_order_is_a_bijection_and_matches_the_a_operand() {
        let mut seen = [false; 64];
        for byte in 0..64 {
            let key = fp8_pv_key(byte);
            assert!(!seen[key as usize], "key {key} placed twice");
            seen[key as usize] = true;
            assert_eq!(fp8_pv_byte(key), byte);
        }
        // Lane quad position q: A byte i of register r of half kk is K
        // position 32 kk + 16 (r / 2) + 4q + i; the accumulator element
        // (tile t, element el) it packs holds key 8t + 2q + el % 2.
        for q in 0..4 {
            for kk in 0..2 {
                for r in 0..4 {
                    for i in 0..4 {
                        let (tile, el) = fp8_pv_source(kk, r, i);
                        assert_eq!(el / 2, r % 2, "the register's row");
                        let k_position = 32 * kk + 16 * (r / 2) + 4 * q + i;
                        assert_eq!(fp8_pv_key(k_position), 8 * tile + 2 * q + el % 2);
                    }
                }
            }
        }
    }
}
