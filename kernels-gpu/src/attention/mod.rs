//! The attention kernels (nvptx only). One module per variant; the PTX
//! entry points are in [`entry`].

pub mod entry;
pub mod mma;
pub mod naive;

/// log2(e): softmax runs in base 2 (`exp(x) = 2^(x * log2 e)`), so the
/// scale folded into the scores carries this factor.
pub const LOG2E: f32 = core::f32::consts::LOG2_E;
