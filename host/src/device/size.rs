//! What a workspace holds: its size in parts, and how many sets of tensor
//! maps it keeps. Plain data (the errors name it), apart from the device
//! module that fills and sizes workspaces.

use kernels_gpu::params::TileMaps;

/// How many sets of Q, K, V buffers (their tensor maps) one [`super::Workspace`]
/// serves inside CUDA-graph captures over its life: one call per layer of
/// a 126-layer model captured into one graph, on distinct buffers.
pub const CAPTURE_MAP_SLOTS: usize = 127;

/// Sets of tensor maps a workspace holds (384 bytes each on the device and
/// in pinned host memory, 48 KiB in all): those captures may pin, and one
/// more that runs outside capture can always write.
pub(crate) const MAP_SLOTS: usize = 1 + CAPTURE_MAP_SLOTS;

/// What a plan needs of a [`super::Workspace`]: bytes of scratch (the
/// `kv_tiles` prepass's tiles, or `decode`'s split partial results), and a
/// slot for Q's, K's and V's tensor maps for kernels that copy tiles by
/// tensor copies.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WorkspaceSize {
    /// Bytes of scratch: the `kv_tiles` prepass's tiles
    /// (`kernels_gpu::params::KvTiles`) or `decode`'s partial results
    /// (`kernels_gpu::params::DecodeSplits`); a plan needs at most one.
    pub scratch_bytes: usize,
    /// Whether the plan's kernel reads tensor maps
    /// (`kernels_gpu::params::TileMaps`).
    pub tile_maps: bool,
}

impl WorkspaceSize {
    /// Device bytes in all: the scratch, and where there are tensor maps
    /// [`CAPTURE_MAP_SLOTS`] + 1 sets of them (see [`super::Workspace`]).
    pub fn bytes(&self) -> usize {
        self.scratch_bytes + if self.tile_maps { MAP_SLOTS * size_of::<TileMaps>() } else { 0 }
    }

    /// Whether a workspace of this size serves a plan that needs `needed`.
    pub fn holds(&self, needed: WorkspaceSize) -> bool {
        self.scratch_bytes >= needed.scratch_bytes && (self.tile_maps || !needed.tile_maps)
    }

    /// The larger of the two in each part.
    pub fn max(self, other: WorkspaceSize) -> WorkspaceSize {
        WorkspaceSize {
            scratch_bytes: self.scratch_bytes.max(other.scratch_bytes),
            tile_maps: self.tile_maps || other.tile_maps,
        }
    }
}
