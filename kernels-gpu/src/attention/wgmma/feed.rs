//! What a `wgmma` block's K/Vt ring needs, apart from who issues it: a
//! tile's walk over its key blocks ([`KeyWalk`]), the copies of one key
//! block into its stage ([`load_kv`]) and the descriptors the products
//! read a stage by ([`kv_descriptors`]).

use crate::arch::{bulk, mbarrier, tma};
use crate::attention::block::BlockJob;
use crate::attention::pipeline::Ring;
use crate::layout::{desc_advanced, kmajor_desc, swizzled_kmajor_desc};
use crate::params::{AttnParams, KvTiles, TILE_KEYS, TileMaps};
use crate::schedule;
use crate::tiles::{TileShape, WgmmaSmemPlan};

/// A block's stages: its shared memory's address, plan and shape.
pub type Stages = (u32, WgmmaSmemPlan, TileShape);

/// One tile's walk over its keys.
#[derive(Clone, Copy)]
pub struct KeyWalk {
    /// Key blocks the tile walks (0: its rows see no key).
    pub key_blocks: u32,
    /// Empty prepass tile slots before the first key block's keys, so that
    /// every later block is whole (with several tiles a key block: block
    /// `j` holds the head's tiles `key_tiles * j - lead ..`).
    pub lead: u32,
    /// The tile's first 64-key tile (0 but under a window).
    pub first_tile: u32,
    /// The head's `Vt` tiles as the prepass wrote them.
    pub vt_tiles: *const u8,
}

impl KeyWalk {
    /// The walk of `job` (its keys `job.key_begin .. job.key_end`;
    /// `windowed`: key blocks from the 64-key tile of `key_begin`, one tile
    /// a block) at `BLOCK_N` keys a block.
    #[inline(always)]
    pub fn of<const BLOCK_N: usize>(p: &AttnParams, job: &BlockJob, kv: KvTiles, windowed: bool) -> KeyWalk {
        let key_tiles = BLOCK_N as u32 / TILE_KEYS;
        let multi = key_tiles > 1;
        let lead = if multi { (key_tiles - job.seq_kv.div_ceil(TILE_KEYS) % key_tiles) % key_tiles } else { 0 };
        let first_tile = if windowed { job.key_begin / TILE_KEYS } else { 0 };
        let block_n = BLOCK_N as u32;
        let key_blocks = if multi && job.key_end > 0 {
            schedule::blocks(job.key_end + lead * TILE_KEYS, block_n)
        } else if windowed {
            schedule::blocks(job.key_end, block_n) - first_tile
        } else {
            schedule::blocks(job.key_end, block_n)
        };
        KeyWalk {
            key_blocks,
            lead,
            first_tile,
            vt_tiles: (p.kv_tiles + kv.vt_tile(job.kv_head, job.kv_tile0)) as *const u8,
        }
    }
}

/// Issues key block `j` of `job`'s walk `walk` as ring use `u`: its K
/// rows by a tensor copy of the problem's K map (swizzled) and its `Vt`
/// tiles by a bulk copy of the prepass's scratch, into stage `u % STAGES`,
/// completing on the stage's "full" barrier. Key block 0 brings only the
/// `Vt` tiles past the `lead` empty slots, and K's box from that many
/// tiles before the head's first key (zeros).
///
/// # Safety
/// One thread; the stage is free (its last use released, or never used);
/// the barriers initialized; `p`'s maps hold K's and its scratch the
/// prepass's tiles.
#[inline(always)]
pub unsafe fn load_kv<const HEAD_DIM: usize, const BLOCK_N: usize, const STAGES: usize>(
    p: &AttnParams,
    (smem_base, plan, shape): Stages,
    kv: KvTiles,
    job: &BlockJob,
    walk: KeyWalk,
    (j, u): (u32, u32),
) {
    let key_tiles = BLOCK_N as u32 / TILE_KEYS;
    let stage = Ring::<STAGES>::at(u).stage;
    let full = smem_base + plan.full_barrier(stage);
    let (tile, skipped) = match (key_tiles > 1, j) {
        (false, _) => (walk.first_tile + j, 0),
        (true, 0) => (0, walk.lead),
        (true, _) => (key_tiles * j - walk.lead, 0),
    };
    let vt_bytes = (key_tiles - skipped) * kv.vt_tile_bytes();
    // A tensor copy counts its whole box, zeros included.
    let k_bytes = BLOCK_N as u32 * HEAD_DIM as u32;
    // (A negative row, as a signed coordinate, for a first block with
    // empty slots.)
    let k_row = (job.kv_row0 + tile * TILE_KEYS).wrapping_sub(skipped * TILE_KEYS);
    // SAFETY: K's box of the block's keys (zeros outside the map's rows)
    // into the K stage, aligned to 1024 bytes (the swizzle's); `Vt` tiles
    // `tile ..` (below padded_keys / 64) inside the scratch; the caller's
    // contract for the stage.
    unsafe {
        mbarrier::arrive_expect_tx(full, k_bytes + vt_bytes);
        let k_map = p.tile_maps + TileMaps::K_OFFSET;
        tma::copy_box_3d(smem_base + plan.k_stage(stage, shape), k_map, (0, k_row, job.kv_head as u32), full);
        bulk::copy_to_shared(
            smem_base + plan.vt_stage(stage, shape) + skipped * kv.vt_tile_bytes(),
            walk.vt_tiles.wrapping_add((tile * kv.vt_tile_bytes()) as usize),
            vt_bytes,
            full,
        );
    }
}

/// The descriptors of ring use `u`'s products: S = Q·Kᵀ's (per k-step of
/// 32 head columns: Q of warpgroup `warpgroup`'s 64 rows, K), and P·V's
/// `Vt` (per product of 32 bytes of a `Vt` row: 16 f16 keys or 32 E4M3
/// ones; a 192-key block's keys 64t .. are the stage's tile t). The first
/// stage's are made once here; each use's are theirs moved by one add
/// (`desc_advanced`). K's rows are swizzled, as its tensor copy lands them.
#[inline(always)]
pub fn kv_descriptors<
    const HEAD_DIM: usize,
    const BLOCK_N: usize,
    const STAGES: usize,
    const QK_STEPS: usize,
    const PV_STEPS: usize,
>(
    (smem_base, plan, shape): Stages,
    kv: KvTiles,
    warpgroup: u32,
) -> (impl Fn(u32) -> [[u64; 2]; QK_STEPS], impl Fn(u32) -> [u64; PV_STEPS]) {
    let key_tiles = BLOCK_N as u32 / TILE_KEYS;
    let k_tile = smem_base + plan.k_stage(0, shape);
    let q_tile = smem_base + plan.q;
    let qk_stage0: [[u64; 2]; QK_STEPS] = core::array::from_fn(|ks| {
        let k_byte = 32 * ks as u32;
        let k = swizzled_kmajor_desc(k_tile, HEAD_DIM as u32, k_byte);
        [kmajor_desc(q_tile, HEAD_DIM as u32, 64 * warpgroup, k_byte), k]
    });
    let pv_stage0: [u64; PV_STEPS] = {
        let vt_tile = smem_base + plan.vt_stage(0, shape);
        let per_tile = PV_STEPS as u32 / key_tiles;
        core::array::from_fn(|kk| {
            let (tile, k_byte) = (kk as u32 / per_tile, 32 * (kk as u32 % per_tile));
            kmajor_desc(vt_tile + tile * kv.vt_tile_bytes(), plan.vt_key_bytes * TILE_KEYS, 0, k_byte)
        })
    };
    let ring = Ring::<STAGES>::at;
    let qk = move |u: u32| {
        let k_bytes = plan.k_stage(ring(u).stage, shape) - plan.k_stage(0, shape);
        qk_stage0.map(|[q, k]| [q, desc_advanced(k, k_bytes)])
    };
    let pv = move |u: u32| {
        let vt_bytes = plan.vt_stage(ring(u).stage, shape) - plan.vt_stage(0, shape);
        pv_stage0.map(|vt| desc_advanced(vt, vt_bytes))
    };
    (qk, pv)
}
