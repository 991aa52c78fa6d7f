//! How the `wgmma` kernel runs alongside its `kv_tiles` prepass instead of
//! after it. The host launches the attention kernel as a programmatic
//! dependent launch of the prepass, which allows it to start once every
//! prepass block has started (`grid_dep::launch_dependents`, which the
//! prepass executes after its own `grid_dep::wait`: so everything before
//! the prepass is complete by then). Instead of waiting for the whole
//! prepass, each attention block waits only for its own head's tiles,
//! counted in the scratch's [`TileSync`] words:
//!
//! 1. [`enter`], thread 0 of every attention block first thing: reads the
//!    call's epoch and counts the block in; the last block of the grid to
//!    do so advances the epoch for the next call (every block of this call
//!    has read it by then, and the next call's blocks start after this grid
//!    has completed).
//! 2. [`publish`], every thread of a prepass block after its tile stores:
//!    fence, block barrier, and thread 0 adds one to its head's ready count
//!    with release semantics.
//! 3. [`wait_for_head`], thread 0 of an attention block before its first
//!    tile copy: polls the head's ready count (acquire) until this call's
//!    prepass has written all of the head's tiles, then orders that before
//!    the bulk copies that read them (async proxy).
//!
//! No block waits on a block that has not started: the prepass's blocks
//! all started before the attention kernel could launch, and they wait for
//! nothing after that.

use crate::arch::{bar, fence, gpu_sync, sreg};
use crate::params::{KvTiles, TileSync};

/// Polls between the ready count's reads, in nanoseconds.
const POLL_NS: u32 = 100;

/// Polls after which [`wait_for_head`] gives up and traps (about 4 s at
/// [`POLL_NS`]): the count did not reach the target, so the scratch's words
/// no longer match the calls made on it (a prepass that was never launched).
/// The launch then fails with an error instead of hanging the GPU.
const MAX_POLLS: u32 = 1 << 25;

/// The word at byte offset `offset` from the scratch's [`TileSync`] words.
#[inline(always)]
fn word(scratch: u64, tiles: &KvTiles, offset: u64) -> *mut u32 {
    (scratch + tiles.sync_words() + offset) as *mut u32
}

/// Counts this attention block into the current call and returns the ready
/// count at which a head's tiles of this call are all written (see
/// [`TileSync`]).
///
/// # Safety
/// Thread 0 of each block of the attention kernel, once; `scratch` is the
/// problem's `kv_tiles` scratch with layout `tiles`.
#[inline(always)]
pub unsafe fn enter(scratch: u64, tiles: &KvTiles) -> u32 {
    let (epoch_word, entered_word) = (word(scratch, tiles, TileSync::EPOCH), word(scratch, tiles, TileSync::ENTERED));
    // SAFETY: words of the scratch (4-byte aligned).
    unsafe {
        let epoch = gpu_sync::load_relaxed(epoch_word);
        // Acquire-release: the epoch was read before the count, and the last
        // block sees every other block's count (so their reads) before its
        // stores below.
        if gpu_sync::fetch_add_acq_rel(entered_word, 1) + 1 == sreg::grid_blocks() {
            gpu_sync::store_relaxed(entered_word, 0);
            gpu_sync::store_relaxed(epoch_word, epoch.wrapping_add(1));
        }
        epoch.wrapping_add(1).wrapping_mul(tiles.tiles_per_head)
    }
}

/// Waits until head `head`'s ready count reaches `target` (from [`enter`]),
/// then makes the tiles visible to this thread's bulk copies.
///
/// # Safety
/// Thread 0 of an attention block; `scratch` and `tiles` as for [`enter`].
#[inline(always)]
pub unsafe fn wait_for_head(scratch: u64, tiles: &KvTiles, head: u64, target: u32) {
    let ready = word(scratch, tiles, TileSync::ready(head));
    let mut polls = 0;
    // SAFETY: a word of the scratch; the fence only orders.
    unsafe {
        while (gpu_sync::load_acquire(ready).wrapping_sub(target) as i32) < 0 {
            polls += 1;
            if polls == MAX_POLLS {
                core::arch::nvptx::trap();
            }
            gpu_sync::nanosleep(POLL_NS);
        }
        fence::proxy_async_global();
    }
}

/// Publishes this prepass block's tile of head `head`: every thread's
/// stores happen before the head's ready count grows.
///
/// # Safety
/// Every thread of a prepass block, after its last tile store; `scratch`
/// and `tiles` as for [`enter`].
#[inline(always)]
pub unsafe fn publish(scratch: u64, tiles: &KvTiles, head: u64) {
    // SAFETY: the fence and the block barrier only order; thread 0 adds
    // to a word of the scratch.
    unsafe {
        fence::acq_rel_gpu();
        bar::sync_threads();
        if sreg::thread_idx_x() == 0 {
            gpu_sync::add_release(word(scratch, tiles, TileSync::ready(head)), 1);
        }
    }
}
