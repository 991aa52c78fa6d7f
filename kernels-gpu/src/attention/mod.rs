//! The attention kernels (nvptx only). One module per variant; the PTX
//! entry points are in [`entry`].

pub mod entry;
pub mod mma;
pub mod naive;
