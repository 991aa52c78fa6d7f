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
