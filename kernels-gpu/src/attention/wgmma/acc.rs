//! The `wgmma` accumulators: per-thread registers in tiles of four, as the
//! kernel keeps them, and as the flat arrays the `wgmma` wrappers take.

/// `acc` as the flat register array the `wgmma` wrappers take.
///
/// # Safety
/// `N == 4 * T` (checked by the callers' dispatch).
#[inline(always)]
pub unsafe fn flat<const T: usize, const N: usize>(acc: &mut [[f32; 4]; T]) -> &mut [f32; N] {
    // SAFETY: `[[f32; 4]; T]` and `[f32; 4 T]` have the same layout.
    unsafe { &mut *(acc as *mut [[f32; 4]; T]).cast::<[f32; N]>() }
}
