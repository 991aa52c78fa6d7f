//! Special registers: thread and block indices.

use core::arch::nvptx;

/// `%tid.x`: the thread index within the block.
#[inline(always)]
pub fn thread_idx_x() -> u32 {
    // SAFETY: reading a special register has no preconditions.
    unsafe { nvptx::_thread_idx_x() }
}

/// `%ctaid.x`: the block index along x.
#[inline(always)]
pub fn block_idx_x() -> u32 {
    // SAFETY: reading a special register has no preconditions.
    unsafe { nvptx::_block_idx_x() }
}

/// `%ctaid.y`: the block index along y.
#[inline(always)]
pub fn block_idx_y() -> u32 {
    // SAFETY: reading a special register has no preconditions.
    unsafe { nvptx::_block_idx_y() }
}

/// `%ctaid.z`: the block index along z.
#[inline(always)]
pub fn block_idx_z() -> u32 {
    // SAFETY: reading a special register has no preconditions.
    unsafe { nvptx::_block_idx_z() }
}

/// `(%ctaid.x, %ctaid.y, %ctaid.z)`: the block's index in the grid.
#[inline(always)]
pub fn block_idx() -> (u32, u32, u32) {
    (block_idx_x(), block_idx_y(), block_idx_z())
}

/// The lane of this thread within its warp (`%tid.x % 32`; blocks are 1-D).
#[inline(always)]
pub fn lane_id() -> u32 {
    thread_idx_x() % 32
}

/// The warp index of this thread within its block (`%tid.x / 32`).
#[inline(always)]
pub fn warp_id() -> u32 {
    thread_idx_x() / 32
}
