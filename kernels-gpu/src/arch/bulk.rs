//! Bulk copies (`cp.async.bulk`, sm_90): the copy engine moves one
//! contiguous run of bytes from global into shared memory, issued by a
//! single thread, and reports the bytes as they land to an `mbarrier`
//! (see [`super::mbarrier::arrive_expect_tx`]). No thread's registers or
//! load/store queue take part, and the data lands in the async proxy, where
//! `wgmma` reads it without a proxy fence.

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
