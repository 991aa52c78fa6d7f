//! The quantizer's instructions: f16 pairs widened to f32, the global
//! maximum and counters its warps share, and the warp exchanges they use.

use core::arch::asm;

/// `cvt.f32.f16`, twice: the two f16 values packed in `pair` (the lower
/// element in the low half, as memory holds them) as f32, exactly.
#[inline(always)]
pub fn f16x2_to_f32x2(pair: u32) -> [f32; 2] {
    let (lo, hi): (f32, f32);
    // SAFETY: register-only conversion.
    unsafe {
        asm!(
            "{{",
            ".reg .b16 l, h;",
            "mov.b32 {{l, h}}, {p};",
            "cvt.f32.f16 {lo}, l;",
            "cvt.f32.f16 {hi}, h;",
            "}}",
            lo = out(reg32) lo,
            hi = out(reg32) hi,
            p = in(reg32) pair,
            options(pure, nomem, nostack)
        );
    }
    [lo, hi]
}

/// Wraps a device-scope instruction on one global `u32` as an `unsafe fn`
/// with the given doc comment, in one of three shapes: `write` (`$op [a],
/// v;`, no result: `red` and `st`), `atom` (`$op o, [a], v;`, the old
/// value) and `ld` (`$op v, [a];`, the value read). All share one contract.
macro_rules! global_u32 {
    ($(#[doc = $doc:literal])* write $name:ident = $op:literal) => {
        $(#[doc = $doc])*
        ///
        /// # Safety
        /// `address` must be a live, 4-byte aligned global-memory `u32`.
        #[inline(always)]
        pub unsafe fn $name(address: *mut u32, value: u32) {
            // SAFETY: the caller guarantees a live, aligned global address.
            unsafe {
                asm!(
                    concat!($op, " [{a}], {v};"),
                    a = in(reg64) address as u64,
                    v = in(reg32) value,
                    options(nostack)
                );
            }
        }
    };
    ($(#[doc = $doc:literal])* atom $name:ident = $op:literal) => {
        $(#[doc = $doc])*
        ///
        /// # Safety
        /// `address` must be a live, 4-byte aligned global-memory `u32`.
        #[inline(always)]
        pub unsafe fn $name(address: *mut u32, bound: u32) -> u32 {
            let old: u32;
            // SAFETY: the caller guarantees a live, aligned global address.
            unsafe {
                asm!(
                    concat!($op, " {o}, [{a}], {b};"),
                    o = out(reg32) old,
                    a = in(reg64) address as u64,
                    b = in(reg32) bound,
                    options(nostack)
                );
            }
            old
        }
    };
    ($(#[doc = $doc:literal])* ld $name:ident = $op:literal) => {
        $(#[doc = $doc])*
        ///
        /// # Safety
        /// `address` must be a live, 4-byte aligned global-memory `u32`.
        #[inline(always)]
        pub unsafe fn $name(address: *const u32) -> u32 {
            let value: u32;
            // SAFETY: the caller guarantees a live, aligned global address.
            unsafe {
                asm!(
                    concat!($op, " {v}, [{a}];"),
                    v = out(reg32) value,
                    a = in(reg64) address as u64,
                    options(nostack)
                );
            }
            value
        }
    };
}

global_u32! {
    /// `red.relaxed.gpu.global.max.u32`: `*address = max(*address, value)`,
    /// atomically at device scope, returning nothing (the L2 applies it).
    write red_max_u32 = "red.relaxed.gpu.global.max.u32"
}

global_u32! {
    /// `atom.relaxed.gpu.global.inc.u32`: returns `*address` and stores
    /// `old >= bound ? 0 : old + 1`, atomically at device scope (a counter of
    /// `bound + 1` tickets that wraps back to zero after its last one).
    atom ticket_u32 = "atom.relaxed.gpu.global.inc.u32"
}

global_u32! {
    /// `atom.acq_rel.gpu.global.inc.u32`: as [`ticket_u32`], with this thread's
    /// earlier memory accesses ordered before it and its later ones after it
    /// (at device scope), so the thread that takes the last count sees what
    /// every earlier counter did before counting.
    atom count_acq_rel_u32 = "atom.acq_rel.gpu.global.inc.u32"
}

global_u32! {
    /// `red.release.gpu.global.add.u32`: `*address += value` at device scope,
    /// after this thread's earlier memory accesses (a reader that acquires the
    /// sum sees them).
    write red_add_release_u32 = "red.release.gpu.global.add.u32"
}

global_u32! {
    /// `ld.acquire.gpu.global.u32`: reads `*address` at device scope, with this
    /// thread's later memory accesses ordered after it.
    ld load_acquire_u32 = "ld.acquire.gpu.global.u32"
}

global_u32! {
    /// `ld.relaxed.gpu.global.u32`: reads `*address` at device scope (from L2,
    /// never a stale L1 line).
    ld load_relaxed_u32 = "ld.relaxed.gpu.global.u32"
}

global_u32! {
    /// `st.relaxed.gpu.global.u32`: writes `*address = value` at device scope.
    write store_relaxed_u32 = "st.relaxed.gpu.global.u32"
}

/// `nanosleep.u32`: suspends the thread for about `nanoseconds` (at most
/// ~1 ms), leaving its issue slots to the SM's other warps while it polls.
#[inline(always)]
pub fn nanosleep(nanoseconds: u32) {
    // SAFETY: no memory effects.
    unsafe { asm!("nanosleep.u32 {n};", n = in(reg32) nanoseconds, options(nomem, nostack)) }
}

/// `mov.b64`: `value`, unchanged, from a register LLVM cannot see into. A
/// choice among fields of the kernel's parameters made on such values stays
/// a choice of values; made on the fields themselves, LLVM turns it into a
/// load from a chosen address, which copies the parameters to the stack.
#[inline(always)]
pub fn opaque_u64(value: u64) -> u64 {
    let out: u64;
    // SAFETY: register-only move.
    unsafe { asm!("mov.b64 {o}, {v};", o = out(reg64) out, v = in(reg64) value, options(pure, nomem, nostack)) };
    out
}

/// As [`opaque_u64`], for a `u32`.
#[inline(always)]
pub fn opaque_u32(value: u32) -> u32 {
    let out: u32;
    // SAFETY: register-only move.
    unsafe { asm!("mov.b32 {o}, {v};", o = out(reg32) out, v = in(reg32) value, options(pure, nomem, nostack)) };
    out
}
