//! What a plan needs to know of the device.

/// What a plan needs to know of the device: whether it runs the sm_90a
/// image (where the Hopper-only variants are) and how many SMs it has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Target {
    /// The sm_90a image is loaded (H100, H200).
    pub sm90a: bool,
    /// Streaming multiprocessors.
    pub multiprocessors: u32,
}
