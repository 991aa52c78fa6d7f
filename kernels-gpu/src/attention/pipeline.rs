//! The rings of shared-memory stages that key blocks stream through.
//!
//! A kernel walks its key blocks `0, 1, 2, ..` through `STAGES` buffers:
//! block `i` lands in stage `i % STAGES`, and is that stage's
//! `i / STAGES`-th use. Where a stage's copies complete on an `mbarrier`,
//! the barrier completes one phase per use, so the wait for block `i` is on
//! phase parity `(i / STAGES) % 2`. [`Ring`] is that position: every
//! kernel's ring (`cp.async` groups, per-group barriers, bulk copies) takes
//! its stage and parity from it.

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

    /// Steps to the next use: the next stage, or past the last one, stage
    /// 0 with the parity flipped.
    #[inline(always)]
    pub const fn advance(&mut self) {
        self.stage += 1;
        if self.stage == STAGES as u32 {
            self.stage = 0;
            self.parity ^= 1;
        }
    }
}
