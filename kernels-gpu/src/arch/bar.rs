//! Block-wide and warp-wide barriers.

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

/// `bar.warp.sync 0xffffffff`: reconverges the warp (every lane waits for
/// the others) after a branch only some lanes took, before instructions
/// that need the whole warp (`.sync.aligned` ones, shuffles).
///
/// # Safety
/// Every lane of the warp must reach this same call.
#[inline(always)]
pub unsafe fn sync_warp() {
    // SAFETY: the caller guarantees every lane arrives.
    unsafe { core::arch::asm!("bar.warp.sync -1;", options(nostack)) }
}

/// `bar.sync ID, threads`: waits until `threads` threads (whole warps)
/// have arrived on named barrier `ID` (1 to 15; 0 is the block's,
/// [`sync_threads`]), and orders their shared-memory accesses around it:
/// a subset of the block (e.g. its consumer warpgroups) meets without the
/// rest.
///
/// # Safety
/// Exactly `threads` threads, whole warps, reach barrier `ID` in each
/// phase, and no other barrier of the block uses `ID` meanwhile.
#[inline(always)]
pub unsafe fn sync_named<const ID: u32>(threads: u32) {
    // SAFETY: the caller guarantees the arrivals.
    unsafe { core::arch::asm!("bar.sync {id}, {n};", id = const ID, n = in(reg32) threads, options(nostack)) }
}
