//! Memory-proxy fences.

use core::arch::asm;

/// `fence.proxy.async.shared::cta`: makes this thread's earlier generic-proxy
/// writes to shared memory (ordinary stores, `cp.async` data it waited for)
/// visible to the async proxy (`wgmma` operand reads). Put it after the
/// writes and before the barrier that precedes the `wgmma`.
///
/// # Safety
/// None beyond ordering; `unsafe` because it orders memory effects the
/// compiler cannot see.
#[inline(always)]
pub unsafe fn proxy_async_shared() {
    // SAFETY: no operands.
    unsafe { asm!("fence.proxy.async.shared::cta;", options(nostack)) }
}

/// `fence.proxy.async.global`: orders this thread's view of global memory
/// (what it acquired from other threads' generic-proxy writes) before its
/// later async-proxy accesses (`cp.async.bulk` reads of that memory). Put it
/// after the acquire and before the bulk copies.
///
/// # Safety
/// None beyond ordering; `unsafe` because it orders memory effects the
/// compiler cannot see.
#[inline(always)]
pub unsafe fn proxy_async_global() {
    // SAFETY: no operands.
    unsafe { asm!("fence.proxy.async.global;", options(nostack)) }
}

/// `fence.acq_rel.gpu`: this thread's earlier memory accesses happen before
/// its later ones for every thread of the GPU (CUDA's `__threadfence`).
///
/// # Safety
/// None beyond ordering; `unsafe` because it orders memory effects the
/// compiler cannot see.
#[inline(always)]
pub unsafe fn acq_rel_gpu() {
    // SAFETY: no operands; a memory clobber keeps accesses on their side.
    unsafe { asm!("fence.acq_rel.gpu;", options(nostack)) }
}
