//! Thread-block clusters (sm_90): a block's rank in its cluster, the
//! cluster's size, the cluster-wide barrier, and copies from global memory
//! into the shared memory of every block of the cluster at once. A kernel
//! launched without a cluster is a cluster of one. On sm_89, which has no
//! clusters, [`size`] is 1 and [`rank`] 0, so code that branches on
//! `size() > 1` compiles away there; the other functions emit nothing.

#[cfg(target_feature = "sm_90a")]
use core::arch::asm;

/// `%cluster_ctarank`: this block's rank in its cluster (0 without one).
#[inline(always)]
pub fn rank() -> u32 {
    #[cfg(target_feature = "sm_90a")]
    {
        let r: u32;
        // SAFETY: reads a special register.
        unsafe { asm!("mov.u32 {r}, %cluster_ctarank;", r = out(reg32) r, options(pure, nomem, nostack)) };
        r
    }
    #[cfg(not(target_feature = "sm_90a"))]
    0
}

/// `%cluster_nctarank`: the blocks in this block's cluster (1 without one).
#[inline(always)]
pub fn size() -> u32 {
    #[cfg(target_feature = "sm_90a")]
    {
        let n: u32;
        // SAFETY: reads a special register.
        unsafe { asm!("mov.u32 {n}, %cluster_nctarank;", n = out(reg32) n, options(pure, nomem, nostack)) };
        n
    }
    #[cfg(not(target_feature = "sm_90a"))]
    1
}

/// `barrier.cluster.arrive.release.aligned`: this thread has arrived at the
/// cluster barrier (its earlier memory accesses are released to the
/// cluster); [`wait`] completes once every thread of every block of the
/// cluster has arrived.
///
/// # Safety
/// Every thread of every block of the cluster must arrive once per phase,
/// warps converged.
#[inline(always)]
pub unsafe fn arrive() {
    // SAFETY: the caller guarantees the participating threads.
    #[cfg(target_feature = "sm_90a")]
    unsafe {
        asm!("barrier.cluster.arrive.release.aligned;", options(nostack))
    }
}

/// `barrier.cluster.wait.acquire.aligned`: waits until the current phase of
/// the cluster barrier completes (see [`arrive`]); the arrivals' released
/// accesses are then visible to this thread.
///
/// # Safety
/// After this thread's [`arrive`] of the phase; warps converged.
#[inline(always)]
pub unsafe fn wait() {
    // SAFETY: the caller guarantees the pairing with `arrive`.
    #[cfg(target_feature = "sm_90a")]
    unsafe {
        asm!("barrier.cluster.wait.acquire.aligned;", options(nostack))
    }
}

/// `fence.mbarrier_init.release.cluster`: makes this thread's earlier
/// `mbarrier.init`s visible to the cluster, so that copies from other
/// blocks may complete on those barriers after the next cluster barrier.
///
/// # Safety
/// None beyond ordering; `unsafe` because it orders memory effects the
/// compiler cannot see.
#[inline(always)]
pub unsafe fn fence_barrier_inits() {
    // SAFETY: no operands.
    #[cfg(target_feature = "sm_90a")]
    unsafe {
        asm!("fence.mbarrier_init.release.cluster;", options(nostack))
    }
}

/// `cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster
/// [dst], [src], bytes, [bar], blocks`: copies `bytes` contiguous bytes from
/// global `src` to shared offset `dst` in every block of the cluster whose
/// rank is set in the mask `blocks`, by the copy engine; in each, the
/// arrival of the bytes completes their share of the transaction count of
/// the barrier at the same offset `bar` (see `mbarrier::arrive_expect_tx`).
///
/// # Safety
/// `dst`, `src` 16-byte aligned, `bytes` a multiple of 16, `src ..
/// src + bytes` readable; `dst .. dst + bytes` and `bar` inside the shared
/// memory of every destination block, whose barrier `bar` expects the
/// bytes in its current phase and was initialized before a cluster
/// barrier that this thread has passed.
#[inline(always)]
pub unsafe fn bulk_copy_multicast(dst: u32, src: *const u8, bytes: u32, bar: u32, blocks: u16) {
    // SAFETY: the caller upholds the contract above.
    #[cfg(target_feature = "sm_90a")]
    unsafe {
        asm!(
            "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [{d}], [{s}], {n}, [{b}], {m};",
            d = in(reg32) dst,
            s = in(reg64) src,
            n = in(reg32) bytes,
            b = in(reg32) bar,
            m = in(reg16) blocks,
            options(nostack)
        );
    }
    #[cfg(not(target_feature = "sm_90a"))]
    let _ = (dst, src, bytes, bar, blocks);
}
