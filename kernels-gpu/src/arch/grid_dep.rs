//! Programmatic dependent launch (sm_90): a kernel launched with the
//! programmatic-stream-serialization attribute may start while the kernel
//! before it on the stream is still running; these two instructions order
//! it against that kernel. Launched without the attribute (or on sm_89,
//! where they are not emitted) both do nothing.

#[cfg(target_feature = "sm_90a")]
use core::arch::asm;

/// `griddepcontrol.launch_dependents`: lets the next kernel on the stream
/// launch once every block of this grid has executed it or exited. It
/// carries no memory ordering (the next kernel's [`wait`] does). The
/// attention kernels call it after their key loop: called first thing, the
/// next grid's waiting blocks took multiprocessor slots while this one ran,
/// and `split` and `mma` at the mission shapes measured 23-41% slower (see
/// lab/).
#[inline(always)]
pub fn launch_dependents() {
    // SAFETY: no operands, no memory effect on this grid.
    #[cfg(target_feature = "sm_90a")]
    unsafe {
        asm!("griddepcontrol.launch_dependents;", options(nostack))
    }
}

/// `griddepcontrol.wait`: blocks until the kernel this one depends on has
/// completed and its memory operations are visible. Every read of an input
/// and every write of an output must come after it.
///
/// # Safety
/// None beyond ordering; `unsafe` because it orders memory effects the
/// compiler cannot see.
#[inline(always)]
pub unsafe fn wait() {
    // SAFETY: no operands; a memory clobber keeps loads and stores after it.
    #[cfg(target_feature = "sm_90a")]
    unsafe {
        asm!("griddepcontrol.wait;", options(nostack))
    }
}
