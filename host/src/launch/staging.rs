//! Pinned host memory from which tensor maps are copied to the device inside
//! CUDA-graph capture: a captured copy reads its source at every replay, so
//! each captured set of maps keeps a slot of its own that is never rewritten
//! with other maps.

use cudarc::driver::{CudaContext, CudaStream, DriverError, PinnedHostSlice, sys};
use kernels_gpu::params::TileMaps;
use std::sync::Arc;

/// Words of one set of tensor maps (`TileMaps`).
pub(crate) const MAP_WORDS: usize = size_of::<TileMaps>() / size_of::<u64>();

/// `slots` sets of tensor maps in pinned host memory.
pub(crate) struct MapStaging {
    pinned: PinnedHostSlice<u64>,
    /// The host address of slot 0 (taken once, outside any capture).
    base: usize,
}

impl MapStaging {
    /// Pinned memory for `slots` sets of maps on `ctx`.
    pub(crate) fn new(ctx: &Arc<CudaContext>, slots: usize) -> Result<MapStaging, DriverError> {
        // SAFETY: every bit pattern is a valid u64, and a slot is written
        // (`write`) before any copy reads it.
        let mut pinned = unsafe { ctx.alloc_pinned::<u64>(slots * MAP_WORDS) }?;
        let base = pinned.as_mut_ptr()? as usize;
        Ok(MapStaging { pinned, base })
    }

    /// How many sets of maps it holds.
    pub(crate) fn slots(&self) -> usize {
        self.pinned.len() / MAP_WORDS
    }

    /// Writes `maps` into slot `slot` (`slot < slots()`; a slot no queued
    /// or captured copy reads yet).
    pub(crate) fn write(&mut self, slot: usize, maps: &[u64; MAP_WORDS]) {
        assert!(slot < self.slots(), "staging slot {slot} of {}", self.slots());
        // SAFETY: the slot lies inside the pinned allocation (checked above),
        // which lives as long as `self`; no copy reads it while it is written
        // (the caller's promise).
        unsafe {
            std::ptr::copy_nonoverlapping(maps.as_ptr(), (self.base as *mut u64).add(slot * MAP_WORDS), MAP_WORDS)
        };
    }

    /// Queues (or, during capture, records) the copy of slot `slot` to the
    /// device address `dst` (`MAP_WORDS` words) on `stream`.
    pub(crate) fn copy(&self, slot: usize, dst: u64, stream: &CudaStream) -> Result<(), DriverError> {
        assert!(slot < self.slots(), "staging slot {slot} of {}", self.slots());
        stream.context().bind_to_thread()?;
        let src = (self.base + slot * MAP_WORDS * size_of::<u64>()) as *const std::ffi::c_void;
        // SAFETY: `src` is a slot of this pinned allocation and `dst` a
        // device buffer of at least `MAP_WORDS` words (the caller's
        // workspace); both outlive the copy, and any graph that records it,
        // as long as the workspace owning them lives (its documented rule).
        unsafe { sys::cuMemcpyHtoDAsync_v2(dst, src, MAP_WORDS * size_of::<u64>(), stream.cu_stream()) }.result()
    }
}
