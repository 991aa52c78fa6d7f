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
