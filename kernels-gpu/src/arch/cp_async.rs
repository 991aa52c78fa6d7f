//! Asynchronous global -> shared copies (`cp.async`, sm_80+).

use core::arch::asm;

/// `cp.async.cg.shared.global [dst], [src], 16, src_bytes`: copies
/// `src_bytes` (0 or 16) bytes from global `src` into the 16 shared bytes at
/// `dst`, filling the rest with zeros. With `src_bytes == 0` nothing is read,
/// so `src` may point anywhere (pass a valid base to keep tools quiet).
///
/// # Safety
/// `dst` must be a 16-byte aligned shared address of this block; when
/// `src_bytes == 16`, `src` must be 16-byte aligned and readable. The data is
/// visible only after [`wait_group`] and a barrier.
#[inline(always)]
pub unsafe fn copy_16_zfill(dst: u32, src: *const u8, src_bytes: u32) {
    // SAFETY: the caller guarantees the addresses; completion is tracked by groups.
    unsafe {
        asm!(
            "cp.async.cg.shared.global [{d}], [{s}], 16, {n};",
            d = in(reg32) dst,
            s = in(reg64) src,
            n = in(reg32) src_bytes,
            options(nostack)
        );
    }
}

/// `cp.async.commit_group`: closes the group of copies issued so far.
///
/// # Safety
/// None beyond those of the copies it groups; it is `unsafe` only because
/// it orders memory effects the compiler cannot see.
#[inline(always)]
pub unsafe fn commit_group() {
    // SAFETY: no operands.
    unsafe { asm!("cp.async.commit_group;", options(nostack)) }
}

/// `cp.async.wait_group N`: waits until at most `pending` of this thread's
/// committed groups are still in flight. `pending` must fold to a constant
/// after inlining (0 ..= 3); a larger value waits for all groups, which is
/// always safe.
///
/// # Safety
/// Other threads' copies are visible only after a following barrier.
#[inline(always)]
pub unsafe fn wait_group(pending: u32) {
    // SAFETY: no memory operands; it only waits.
    unsafe {
        match pending {
            1 => asm!("cp.async.wait_group 1;", options(nostack)),
            2 => asm!("cp.async.wait_group 2;", options(nostack)),
            3 => asm!("cp.async.wait_group 3;", options(nostack)),
            _ => asm!("cp.async.wait_group 0;", options(nostack)),
        }
    }
}
