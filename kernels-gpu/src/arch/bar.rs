//! Block-wide barriers.

/// `bar.sync 0`: waits until every thread of the block arrives, and orders
/// their shared-memory accesses around it.
///
/// # Safety
/// Every non-exited thread of the block must reach this same call
/// (block-uniform control flow), or the block deadlocks.
#[inline(always)]
pub unsafe fn sync_threads() {
    // SAFETY: the caller guarantees block-uniform control flow.
    unsafe { core::arch::nvptx::_syncthreads() }
}

/// `bar.sync id, threads`: waits until `threads` threads (whole warps) have
/// arrived at named barrier `id` (1..=15; 0 is [`sync_threads`]'s), and
/// orders their shared-memory accesses around it. A group of warps syncs
/// alone this way while the rest of the block goes on.
///
/// # Safety
/// Exactly `threads` threads (a multiple of 32), in whole warps, must reach
/// a barrier with this `id` for each phase, and no other barrier of the
/// block may use `id` meanwhile.
#[inline(always)]
pub unsafe fn sync_named(id: u32, threads: u32) {
    // SAFETY: the caller guarantees the participating warps.
    unsafe { core::arch::asm!("bar.sync {id}, {n};", id = in(reg32) id, n = in(reg32) threads, options(nostack)) }
}
