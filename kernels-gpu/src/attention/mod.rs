//! The attention kernels (nvptx only). One module per variant; the PTX
//! entry points are in [`entry`].

pub mod block;
pub mod decode;
pub mod entry;
pub mod merge;
pub mod mma;
pub mod online;
pub mod output;
pub mod pipeline;
pub mod prepass;
pub mod split;
pub mod walk;
pub mod warp_tile;
#[cfg(target_feature = "sm_90a")]
pub mod wgmma;
