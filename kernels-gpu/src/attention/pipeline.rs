//! The rings of shared-memory stages that key blocks stream through.
//!
//! A kernel walks its key blocks `0, 1, 2, ..` through `STAGES` buffers:
//! block `i` lands in stage `i % STAGES`, and is that stage's
//! `i / STAGES`-th use. Where a stage's copies complete on an `mbarrier`,
//! the barrier completes one phase per use, so the wait for block `i` is on
//! phase parity `(i / STAGES) % 2`. [`Ring`] is that position: every
//! kernel's ring (`cp.async` groups, per-group barriers, bulk copies) takes
//! its stage and parity from it; [`wait`] and [`release`] are a stage's
//! barrier choreography.

use crate::arch::{bar, cp_async, mbarrier};

/// A position in a ring of `STAGES` buffers: the stage a key block uses and
/// the parity of that stage's barrier phase for this use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ring<const STAGES: usize> {
    /// The stage (buffer) of this use: `0 .. STAGES`.
    pub stage: u32,
    /// The parity of the stage's barrier phase that completes for this use.
    pub parity: u32,
}

impl<const STAGES: usize> Ring<STAGES> {
    /// The position of use `i` (the `i`-th key block of a walk).
    #[inline(always)]
    pub const fn at(i: u32) -> Self {
        let stages = STAGES as u32;
        Self { stage: i % stages, parity: (i / stages) % 2 }
    }
}

/// Waits until the use `at` of a stage has landed: the phase of its
/// barrier `barrier` ("full") for that use.
///
/// # Safety
/// The copies of that use complete on this phase of `barrier`.
#[inline(always)]
pub unsafe fn wait<const STAGES: usize>(barrier: u32, at: Ring<STAGES>) {
    // SAFETY: forwarded.
    unsafe { mbarrier::wait(barrier, at.parity) };
}

/// Releases a stage after its use `at`: this thread is done reading it
/// (arrives on its "empty" barrier `empty`); a `refiller` then waits until
/// every thread that reads the stage is, before it refills the stage.
///
/// # Safety
/// Uniform over the threads that read the stage: one arrival per thread
/// and phase.
#[inline(always)]
pub unsafe fn release<const STAGES: usize>(empty: u32, at: Ring<STAGES>, refiller: bool) {
    // SAFETY: forwarded; every reader arrives in this phase.
    unsafe {
        mbarrier::arrive(empty);
        if refiller {
            mbarrier::wait(empty, at.parity);
        }
    }
}

/// In a `cp.async` ring of `STAGES` stages whose every step commits one
/// group: waits until this thread's copies of the oldest pending step have
/// landed, then for the whole block (so every thread's have).
///
/// # Safety
/// Block-uniform.
#[inline(always)]
pub unsafe fn wait_copies<const STAGES: usize>() {
    // SAFETY: forwarded.
    unsafe {
        cp_async::wait_group(STAGES as u32 - 2);
        bar::sync_threads();
    }
}
