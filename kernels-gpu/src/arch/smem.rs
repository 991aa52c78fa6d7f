//! Shared memory: the dynamic allocation and shared-window addresses.

use core::arch::asm;

/// Alignment marker for the dynamic shared memory base (128 bytes covers
/// `cp.async` 16-byte chunks and `ldmatrix` rows with room to spare).
#[repr(C, align(128))]
pub struct SmemAlign128([u8; 128]);

/// Base of the block's dynamic shared memory (sized at launch), as a
/// generic pointer aligned to 128 bytes.
#[inline(always)]
pub fn dynamic_smem_base() -> *mut u8 {
    core::intrinsics::gpu::gpu_launch_sized_workgroup_mem::<SmemAlign128>().cast()
}

/// `cvta.to.shared.u64`: the 32-bit shared-window address of a generic
/// pointer into shared memory (what `cp.async` and `ldmatrix` take).
///
/// # Safety
/// `ptr` must point into this block's shared memory.
#[inline(always)]
pub unsafe fn shared_addr<T>(ptr: *const T) -> u32 {
    let addr: u64;
    // SAFETY: pure address arithmetic; the caller guarantees `ptr` is shared.
    unsafe {
        asm!(
            "cvta.to.shared.u64 {a}, {p};",
            a = out(reg64) addr,
            p = in(reg64) ptr as u64,
            options(pure, nomem, nostack)
        );
    }
    addr as u32
}

/// `ld.shared.v4.f32`: four floats at `addr` (shared window, 16-byte
/// aligned) in one access. Opaque to LLVM, which otherwise splits a vector
/// load whose elements are used under different conditions into 4- and
/// 8-byte loads sunk into those conditions (each one a bank conflict when
/// the lanes read 16 bytes apart).
///
/// # Safety
/// `addr` must be a 16-byte aligned shared-memory address of this block,
/// with no write to it in flight.
#[inline(always)]
pub unsafe fn load_f32x4(addr: u32) -> [f32; 4] {
    let (a, b, c, d): (f32, f32, f32, f32);
    // SAFETY: the caller guarantees an aligned, readable shared address.
    unsafe {
        asm!(
            "ld.shared.v4.f32 {{{a}, {b}, {c}, {d}}}, [{p}];",
            a = out(reg32) a,
            b = out(reg32) b,
            c = out(reg32) c,
            d = out(reg32) d,
            p = in(reg32) addr,
            options(pure, readonly, nostack)
        );
    }
    [a, b, c, d]
}
