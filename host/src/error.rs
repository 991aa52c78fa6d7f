//! The one error type of the library: every invalid input and every GPU
//! failure is one of these, never a panic.

use thiserror::Error;

/// Why a call was refused or failed. Each variant names the problem; more
/// may come, so a `match` needs a wildcard arm.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum AttnError {
    /// Tensors whose shapes do not fit together.
    #[error("shape mismatch: {0}")]
    ShapeMismatch(String),
    /// A head dimension no kernel serves.
    #[error("head dimension {head_dim} is not supported (supported: {supported:?})")]
    UnsupportedHeadDim {
        /// The head dimension given.
        head_dim: usize,
        /// The ones the kernels serve.
        supported: Vec<u32>,
    },
    /// A dimension of size zero.
    #[error("{tensor} has a zero-sized dimension: shape {shape:?}")]
    ZeroDimension {
        /// Which tensor.
        tensor: &'static str,
        /// Its shape.
        shape: [usize; 4],
    },
    /// Query heads not a multiple of key/value heads.
    #[error("query heads ({heads_q}) must be a multiple of key/value heads ({heads_kv})")]
    HeadsNotDivisible {
        /// Query heads.
        heads_q: usize,
        /// Key/value heads.
        heads_kv: usize,
    },
    /// A scale that is NaN, infinite, zero or negative.
    #[error("{what} must be finite and positive, got {value}")]
    InvalidScale {
        /// Which scale (e.g. "softmax scale", `q_scale[3]`).
        what: String,
        /// The value given.
        value: f32,
    },
    /// Scales that are valid numbers but whose products the kernels cannot
    /// represent: a score factor that underflows or overflows f32, or V's
    /// scale past what the output type holds.
    #[error("{what} = {value:e} is out of range: {why}")]
    ScaleOutOfRange {
        /// Which scale or product (e.g. `v_scale[3]`).
        what: String,
        /// Its value.
        value: f32,
        /// The limit it breaks.
        why: String,
    },
    /// A buffer whose length does not match its shape.
    #[error("{tensor} holds {actual} elements but its shape needs {expected}")]
    BufferLength {
        /// Which buffer.
        tensor: String,
        /// Elements the shape needs.
        expected: usize,
        /// Elements it holds.
        actual: usize,
    },
    /// Sizes whose indices would overflow the kernels' index types or the grid.
    #[error("problem too large: {0}")]
    TooLarge(String),
    /// An unknown variant name.
    #[error("unknown kernel variant {name:?} (known: {known})")]
    UnknownVariant {
        /// The name given.
        name: String,
        /// The known names, comma-separated.
        known: String,
    },
    /// No usable CUDA driver (libcuda could not be loaded or initialised).
    #[error("no CUDA driver: {0}")]
    NoDriver(String),
    /// No GPU with the requested ordinal.
    #[error("no CUDA device {ordinal} (devices found: {count})")]
    NoDevice {
        /// The ordinal asked for.
        ordinal: usize,
        /// How many devices the driver reports.
        count: usize,
    },
    /// A GPU the kernels cannot run on (FP8 `mma` needs compute capability 8.9+).
    #[error("device {name} has compute capability {major}.{minor}; FP8 attention needs 8.9 or newer")]
    UnsupportedDevice {
        /// Device name.
        name: String,
        /// Major compute capability.
        major: i32,
        /// Minor compute capability.
        minor: i32,
    },
    /// An embedded image asked for by arch ([`crate::embedded::ImageChoice`],
    /// `SDPA_IMAGE`) that this build does not hold.
    #[error("no embedded image {name:?} (embedded: {known})")]
    UnknownImage {
        /// The arch given.
        name: String,
        /// The embedded images' archs, comma-separated.
        known: String,
    },
    /// An embedded image asked for by arch that the device cannot run.
    #[error("image {arch} cannot run on device {device} (compute capability {major}.{minor}): {reason}")]
    ImageUnsupported {
        /// The image's arch.
        arch: &'static str,
        /// Device name.
        device: String,
        /// Major compute capability of the device.
        major: i32,
        /// Minor compute capability of the device.
        minor: i32,
        /// Why not.
        reason: String,
    },
    /// An input tensor on another device than the `Attention`'s.
    #[error("tensor {tensor} is on device {ordinal}, but this Attention runs on device {expected}")]
    WrongDevice {
        /// Which tensor.
        tensor: &'static str,
        /// Its device.
        ordinal: usize,
        /// The `Attention`'s device.
        expected: usize,
    },
    /// A stream of another CUDA context than the `Attention`'s
    /// ([`crate::Attention::for_stream`]).
    #[error("the stream belongs to another CUDA context (device {ordinal}) than this Attention's (device {expected})")]
    OtherContext {
        /// The stream's device.
        ordinal: usize,
        /// The `Attention`'s device.
        expected: usize,
    },
    /// A variant this device (or the loaded image) cannot run.
    #[error("variant {variant} is not available here: {reason}")]
    VariantUnavailable {
        /// The variant's name.
        variant: &'static str,
        /// Why not.
        reason: String,
    },
    /// A variant (or kernel) that does not compute the scores the options
    /// ask for: a sliding window or a softcap, which only the `wgmma`
    /// variants' kernels serve.
    #[error("{what} does not support {feature} (it runs on {supported})")]
    UnsupportedScores {
        /// The variant or kernel entry.
        what: &'static str,
        /// What the options ask for ("a sliding window", "a softcap").
        feature: &'static str,
        /// Where it runs.
        supported: &'static str,
    },
    /// A kernel asked for by name ([`crate::plan::Plan::with_kernel`]) that
    /// does not serve the problem's head dimension and output type.
    #[error("kernel {entry} does not serve head dimension {head_dim} writing {output}")]
    KernelMismatch {
        /// The kernel's entry.
        entry: &'static str,
        /// The problem's head dimension.
        head_dim: usize,
        /// The problem's output type.
        output: &'static str,
    },
    /// [`crate::plan::Plan::with_kernel`] was given a kernel that does not
    /// run this problem's lengths (a pair-row kernel, an odd length).
    #[error("kernel {entry} runs only on even query and key lengths, not {seq_q} and {seq_kv}")]
    KernelLengths {
        /// The kernel's entry.
        entry: &'static str,
        /// The problem's query length.
        seq_q: usize,
        /// The problem's key length.
        seq_kv: usize,
    },
    /// Row strides a view cannot have (`sdpa::device::RowStrides`), or
    /// that the plan's kernel does not read.
    #[error("{tensor} has row strides (row {row}, head {head} elements) the kernels cannot read: {reason}")]
    InvalidStrides {
        /// Which view.
        tensor: String,
        /// Elements from one row to the next.
        row: usize,
        /// Elements from one head to the next.
        head: usize,
        /// Why not.
        reason: String,
    },
    /// A tensor layout the chosen path cannot take (see
    /// [`crate::Layout`]).
    #[error("layout {layout} is not available here: {reason}")]
    LayoutUnavailable {
        /// The layout's name.
        layout: &'static str,
        /// Why not.
        reason: String,
    },
    /// Inputs handed to a plan that was made for others (other shapes or
    /// scales).
    #[error("inputs do not match the plan: {0}")]
    NotPlanned(String),
    /// A device buffer at an address the kernels cannot use (Q, K, V and O
    /// need 16-byte alignment, the scales 4).
    #[error("{tensor} is at device address {address:#x}, which is not {align}-byte aligned")]
    Misaligned {
        /// Which buffer.
        tensor: &'static str,
        /// Its address.
        address: u64,
        /// The alignment it needs.
        align: u64,
    },
    /// A raw address ([`crate::raw`]) that the driver does not know
    /// as device memory.
    #[error("{tensor} at {address:#x} is not CUDA device memory")]
    NotDeviceMemory {
        /// Which buffer.
        tensor: &'static str,
        /// The address given.
        address: u64,
    },
    /// A [`crate::device::Workspace`] smaller than the plan needs (see
    /// [`crate::Attention::grow_workspace`]).
    #[error("workspace too small: it holds {available:?}, the plan needs {needed:?}")]
    WorkspaceTooSmall {
        /// What the plan needs.
        needed: crate::device::size::WorkspaceSize,
        /// What the workspace holds.
        available: crate::device::size::WorkspaceSize,
    },
    /// A run during CUDA-graph capture with a new set of buffers when the
    /// workspace's capture slots for tensor maps are all taken (see
    /// [`crate::device::Workspace`]).
    #[error(
        "the workspace's {} capture slots for tensor maps are taken by other buffers: use another workspace",
        crate::device::size::CAPTURE_MAP_SLOTS
    )]
    WorkspaceInCapture,
    /// A CUDA driver call failed.
    #[error("CUDA driver error: {0}")]
    Driver(#[from] cudarc::driver::DriverError),
}
