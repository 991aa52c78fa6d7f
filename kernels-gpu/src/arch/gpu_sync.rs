//! Global-memory words through which blocks of different grids that run at
//! the same time (a programmatic dependent launch and the kernel before it)
//! signal each other: scoped loads, stores and atomics (PTX memory model,
//! `.gpu` scope), and a sleep for polling loops.

use core::arch::asm;

/// `ld.relaxed.gpu.global.u32`: a word another grid may write meanwhile.
///
/// # Safety
/// `addr` must be a 4-byte aligned global address.
#[inline(always)]
pub unsafe fn load_relaxed(addr: *const u32) -> u32 {
    let v: u32;
    // SAFETY: the caller guarantees an aligned global address.
    unsafe { asm!("ld.relaxed.gpu.global.u32 {v}, [{a}];", v = out(reg32) v, a = in(reg64) addr, options(nostack)) };
    v
}

/// `ld.acquire.gpu.global.u32`: a word another thread releases; what that
/// thread wrote before its release is visible to this thread's later reads.
///
/// # Safety
/// `addr` must be a 4-byte aligned global address.
#[inline(always)]
pub unsafe fn load_acquire(addr: *const u32) -> u32 {
    let v: u32;
    // SAFETY: the caller guarantees an aligned global address.
    unsafe { asm!("ld.acquire.gpu.global.u32 {v}, [{a}];", v = out(reg32) v, a = in(reg64) addr, options(nostack)) };
    v
}

/// `st.relaxed.gpu.global.u32`.
///
/// # Safety
/// `addr` must be a 4-byte aligned global address.
#[inline(always)]
pub unsafe fn store_relaxed(addr: *mut u32, v: u32) {
    // SAFETY: the caller guarantees an aligned global address.
    unsafe { asm!("st.relaxed.gpu.global.u32 [{a}], {v};", a = in(reg64) addr, v = in(reg32) v, options(nostack)) };
}

/// `atom.acq_rel.gpu.global.add.u32`: adds `v`, returns the word before.
///
/// # Safety
/// `addr` must be a 4-byte aligned global address.
#[inline(always)]
pub unsafe fn fetch_add_acq_rel(addr: *mut u32, v: u32) -> u32 {
    let old: u32;
    // SAFETY: the caller guarantees an aligned global address.
    unsafe {
        asm!(
            "atom.acq_rel.gpu.global.add.u32 {o}, [{a}], {v};",
            o = out(reg32) old,
            a = in(reg64) addr,
            v = in(reg32) v,
            options(nostack)
        )
    };
    old
}

/// `red.release.gpu.global.add.u32`: adds `v`; what this thread wrote (or
/// acquired) before is visible to whoever acquires the sum.
///
/// # Safety
/// `addr` must be a 4-byte aligned global address.
#[inline(always)]
pub unsafe fn add_release(addr: *mut u32, v: u32) {
    // SAFETY: the caller guarantees an aligned global address.
    unsafe {
        asm!("red.release.gpu.global.add.u32 [{a}], {v};", a = in(reg64) addr, v = in(reg32) v, options(nostack))
    };
}

/// `nanosleep.u32`: suspends the warp for about `ns` nanoseconds (at most
/// 1 ms), leaving its issue slots to the other warps of the SM.
#[inline(always)]
pub fn nanosleep(ns: u32) {
    // SAFETY: no memory effect.
    unsafe { asm!("nanosleep.u32 {t};", t = in(reg32) ns, options(nomem, nostack)) };
}
