//! The quantizer's instructions: f16 pairs widened to f32, E4M3 pairs
//! packed from f32, and the global maximum its blocks reduce into.

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

/// `red.relaxed.gpu.global.max.u32`: `*address = max(*address, value)`,
/// atomically at device scope, returning nothing (the L2 applies it).
///
/// # Safety
/// `address` must be a live, 4-byte aligned global-memory `u32`.
#[inline(always)]
pub unsafe fn red_max_u32(address: *mut u32, value: u32) {
    // SAFETY: the caller guarantees a live, aligned global address.
    unsafe {
        asm!(
            "red.relaxed.gpu.global.max.u32 [{a}], {v};",
            a = in(reg64) address as u64,
            v = in(reg32) value,
            options(nostack)
        );
    }
}
