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
