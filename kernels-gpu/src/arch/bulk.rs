//! Bulk copies (`cp.async.bulk`, sm_90): the copy engine moves one
//! contiguous run of bytes between global and shared memory, issued by a
//! single thread. Into shared memory it reports the bytes as they land to
//! an `mbarrier` (see [`super::mbarrier::arrive_expect_tx`]); out of it,
//! the issuing thread waits for its bulk async-groups. No thread's
//! registers or load/store queue take part, and the data moves in the async
//! proxy, where `wgmma` reads it without a proxy fence.

use core::arch::asm;

/// `cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes
/// [dst], [src], bytes, [bar]`: copies `bytes` contiguous bytes from global
/// `src` to shared `dst` (this block's own shared window, a valid
/// `shared::cluster` address in a launch without clusters) and counts them
/// as transactions completing on `bar`.
///
/// # Safety
/// `dst` and `src` 16-byte aligned, `bytes` a multiple of 16; `src ..
/// src + bytes` readable and `dst .. dst + bytes` inside this block's shared
/// memory; `bar` an initialized barrier of this block whose current phase
/// expects these bytes (`arrive_expect_tx`); nothing reads `dst` before that
/// phase completes, and nothing else writes it meanwhile.
#[inline(always)]
pub unsafe fn copy_to_shared(dst: u32, src: *const u8, bytes: u32, bar: u32) {
    // SAFETY: the caller guarantees the addresses, the size and the barrier.
    unsafe {
        asm!(
            "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [{d}], [{s}], {n}, [{b}];",
            d = in(reg32) dst,
            s = in(reg64) src,
            n = in(reg32) bytes,
            b = in(reg32) bar,
            options(nostack)
        );
    }
}

/// `cp.async.bulk.global.shared::cta.bulk_group [dst], [src], bytes`:
/// copies `bytes` contiguous bytes from this block's shared `src` to global
/// `dst` through the copy engine, as part of this thread's current bulk
/// async-group (see [`commit_group`], [`wait_groups`]). It reads `src` in
/// the async proxy: the generic writes of `src` need
/// `fence::proxy_async_shared` (and the writers a barrier) before it.
///
/// # Safety
/// `dst` and `src` 16-byte aligned, `bytes` a multiple of 16; `dst .. dst +
/// bytes` writable global memory and `src .. src + bytes` inside this
/// block's shared memory, left unchanged until [`wait_groups`] returns.
#[inline(always)]
pub unsafe fn copy_to_global(dst: *mut u8, src: u32, bytes: u32) {
    // SAFETY: the caller guarantees the addresses and the size.
    unsafe {
        asm!(
            "cp.async.bulk.global.shared::cta.bulk_group [{d}], [{s}], {n};",
            d = in(reg64) dst,
            s = in(reg32) src,
            n = in(reg32) bytes,
            options(nostack)
        );
    }
}

/// `cp.async.bulk.commit_group`: closes this thread's current bulk
/// async-group (the [`copy_to_global`] copies issued since the last one).
///
/// # Safety
/// None beyond ordering; `unsafe` because it orders memory effects the
/// compiler cannot see.
#[inline(always)]
pub unsafe fn commit_group() {
    // SAFETY: no operands.
    unsafe { asm!("cp.async.bulk.commit_group;", options(nostack)) }
}

/// `cp.async.bulk.wait_group 0`: waits until every bulk async-group this
/// thread committed has completed (its shared sources read, its global
/// writes performed).
///
/// # Safety
/// None beyond ordering; `unsafe` because it orders memory effects the
/// compiler cannot see.
#[inline(always)]
pub unsafe fn wait_groups() {
    // SAFETY: no operands; a memory clobber keeps accesses after it.
    unsafe { asm!("cp.async.bulk.wait_group 0;", options(nostack)) }
}
