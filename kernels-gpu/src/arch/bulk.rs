//! Bulk asynchronous copies (`cp.async.bulk`, sm_90) and the shared-memory
//! transaction barriers (`mbarrier`) they complete on.
//!
//! A barrier is a 64-bit word in shared memory. It expects a number of
//! arrivals per phase and, optionally, a number of bytes ("transactions"):
//! a copy issued with [`copy_to_shared`] counts its bytes off the barrier
//! when they have landed. The phase completes when every arrival has come
//! and every expected byte has landed; waiters then see the copied data.
//! Phases alternate parity 0, 1, 0, ..; a waiter names the parity of the
//! phase it waits for.

use core::arch::asm;

/// `mbarrier.init.shared::cta.b64 [bar], count`: a barrier expecting
/// `count` arrivals per phase, in phase 0.
///
/// # Safety
/// `bar` is an 8-byte aligned shared address of this block that no other
/// thread uses until a [`fence_init`] and a block barrier have followed.
#[inline(always)]
pub unsafe fn init(bar: u32, count: u32) {
    // SAFETY: the caller guarantees the address and exclusive use.
    unsafe {
        asm!("mbarrier.init.shared::cta.b64 [{b}], {n};", b = in(reg32) bar, n = in(reg32) count, options(nostack))
    }
}

/// `fence.mbarrier_init.release.cluster`: makes this thread's earlier
/// [`init`]s visible to other threads and to the copy engine (before the
/// block barrier that publishes them).
///
/// # Safety
/// None beyond ordering; `unsafe` because it orders memory effects the
/// compiler cannot see.
#[inline(always)]
pub unsafe fn fence_init() {
    // SAFETY: no operands.
    unsafe { asm!("fence.mbarrier_init.release.cluster;", options(nostack)) }
}

/// `mbarrier.arrive.expect_tx.shared::cta.b64 _, [bar], bytes`: arrives
/// once and adds `bytes` to the bytes the current phase waits for. Issue it
/// before the copies that count those bytes off.
///
/// # Safety
/// `bar` is an initialized barrier of this block.
#[inline(always)]
pub unsafe fn arrive_expect_tx(bar: u32, bytes: u32) {
    // SAFETY: the caller guarantees the barrier.
    unsafe {
        asm!(
            "mbarrier.arrive.expect_tx.shared::cta.b64 _, [{b}], {n};",
            b = in(reg32) bar,
            n = in(reg32) bytes,
            options(nostack)
        )
    }
}

/// `mbarrier.arrive.shared::cta.b64 _, [bar]`: arrives once (release:
/// this thread's earlier shared-memory accesses happen before the phase
/// completes).
///
/// # Safety
/// `bar` is an initialized barrier of this block.
#[inline(always)]
pub unsafe fn arrive(bar: u32) {
    // SAFETY: the caller guarantees the barrier.
    unsafe { asm!("mbarrier.arrive.shared::cta.b64 _, [{b}];", b = in(reg32) bar, options(nostack)) }
}

/// `mbarrier.try_wait.parity.shared::cta.b64`: whether the phase of
/// parity `parity` has completed (waiting a while in hardware before
/// answering no). When it answers yes, the phase's copies and the
/// arrivers' earlier accesses are visible to this thread (acquire).
///
/// # Safety
/// `bar` is an initialized barrier of this block.
#[inline(always)]
unsafe fn try_wait_parity(bar: u32, parity: u32) -> bool {
    let done: u32;
    // SAFETY: the caller guarantees the barrier.
    unsafe {
        asm!(
            "{{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [{b}], {ph}; selp.u32 {d}, 1, 0, p; }}",
            b = in(reg32) bar,
            ph = in(reg32) parity,
            d = out(reg32) done,
            options(nostack)
        )
    }
    done != 0
}

/// Waits until the phase of parity `parity` of `bar` has completed (see
/// [`try_wait_parity`]).
///
/// # Safety
/// `bar` is an initialized barrier of this block whose phase of that
/// parity will complete.
#[inline(always)]
pub unsafe fn wait_parity(bar: u32, parity: u32) {
    // SAFETY: forwarded.
    while !unsafe { try_wait_parity(bar, parity) } {}
}

/// `cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes
/// [dst], [src], bytes, [bar]`: copies `bytes` contiguous bytes from global
/// `src` to shared `dst` on the copy engine and counts them off `bar`'s
/// current phase when they have landed.
///
/// # Safety
/// `dst` and `src` 16-byte aligned, `bytes` a multiple of 16, `src ..
/// src + bytes` readable, `dst ..` inside this block's shared memory and not
/// read or written until `bar`'s phase completes; `bar` an initialized
/// barrier of this block whose phase expects these bytes.
#[inline(always)]
pub unsafe fn copy_to_shared(dst: u32, src: *const u8, bytes: u32, bar: u32) {
    // SAFETY: the caller guarantees addresses, size and barrier.
    unsafe {
        asm!(
            "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [{d}], [{s}], {n}, [{b}];",
            d = in(reg32) dst,
            s = in(reg64) src,
            n = in(reg32) bytes,
            b = in(reg32) bar,
            options(nostack)
        )
    }
}
