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
