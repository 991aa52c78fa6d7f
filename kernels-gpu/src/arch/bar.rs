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

/// `bar.sync ID, threads`: a named barrier for a subset of the block. Waits
/// until `threads` threads (a multiple of 32, whole warps) have arrived at
/// barrier `ID` (1..=15; 0 is [`sync_threads`]'s), and orders their
/// shared-memory accesses around it. The ID is an immediate (a const
/// generic), so ptxas reserves only the barriers used and the sanitizers
/// see which barrier each group meets.
///
/// # Safety
/// Exactly the `threads` threads of one group reach it, with the same `ID`
/// and `threads`, in the same order as their other barriers; otherwise the
/// group deadlocks.
#[inline(always)]
pub unsafe fn sync_named<const ID: u32>(threads: u32) {
    const { assert!(ID >= 1 && ID <= 15, "barrier 0 is the block's; 16 barriers per block") };
    // SAFETY: the caller guarantees the group's uniform control flow.
    unsafe {
        core::arch::asm!(
            "bar.sync {id}, {threads};",
            id = const ID,
            threads = in(reg32) threads,
            options(nostack)
        )
    };
}
