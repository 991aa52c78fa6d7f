//! `sdpa`: FP8 (E4M3) scaled-dot-product attention for NVIDIA GPUs, with
//! kernels written in Rust (`kernels-gpu`, compiled to PTX by rustc's
//! `nvptx64-nvidia-cuda` target and embedded in this crate).
//!
//! ```no_run
//! # fn main() -> Result<(), sdpa::AttnError> {
//! # let (q, k, v): (sdpa::Fp8Tensor, sdpa::Fp8Tensor, sdpa::Fp8Tensor) = todo!();
//! let attn = sdpa::Attention::new(0)?; // loads the embedded kernels
//! // The recommended variant for this device and problem:
//! let o = attn.forward(&q, &k, &v, &sdpa::Options::new().causal(true))?;
//! // Or one variant by name, planned once and run on the device:
//! let opts = sdpa::Options::new().variant(sdpa::Variant::Mma);
//! let plan = attn.plan(&q, &k, &v, &opts)?;
//! let dev = attn.upload(&plan, &q, &k, &v)?;
//! let mut out = attn.alloc_output(&dev)?;
//! attn.run(&dev, &mut out)?;
//! let o = attn.download(&out)?;
//! # Ok(()) }
//! ```
//!
//! Computes `O = softmax(scale * Q K^T + mask) V` per batch and query head,
//! with Q `[B, Hq, Sq, D]`, K and V `[B, Hkv, Skv, D]` (E4M3 with one f32
//! dequantization scale per head) and O `[B, Hq, Sq, D]` in f16 or, with
//! `Options::output`, bf16.
//!
//! Frameworks with buffers already on the GPU, scales on the device (per
//! head or per (batch, KV head)) and a stream of their own use [`device`]:
//! [`Attention::on_stream`], [`Attention::plan_shapes`] and
//! [`Attention::run_views`], which allocates and copies nothing.

pub mod attention;
#[doc(hidden)]
pub mod bench;
#[cfg(feature = "candle")]
pub mod candle;
pub mod device;
pub mod embedded;
pub mod error;
pub mod io;
mod launch;
#[doc(hidden)]
pub mod metrics;
pub mod options;
pub mod plan;
pub mod quant;
pub mod quantize;
#[doc(hidden)]
pub mod reference;
pub mod tensor;
pub mod validate;

/// The cudarc this crate is built on: its context, stream and view types
/// appear in the device API ([`device`], [`Attention::on_stream`]).
pub use cudarc;

pub use attention::{Attention, CapturedRuns, DeviceInfo, DeviceOutput, DeviceProblem, Launch};
pub use device::{DeviceScales, Fp8View, OutputViewMut, PagedKv, RunExtras, ScaleLayout, Workspace, WorkspaceSize};
pub use embedded::ImageChoice;
pub use error::AttnError;
pub use kernels_gpu::variant::{OutputDtype, Variant};
pub use kernels_gpu::window::KeyWindow;
/// `unsafe` constructors from raw CUDA handles (a `CUstream`, device
/// addresses), for bindings whose framework owns the memory and the stream.
pub use launch::raw;
pub use options::{Layout, Options, VariantChoice};
pub use plan::Plan;
pub use plan::target::Target;
pub use tensor::{DeviceFp8Tensor, Fp8Input, Fp8Tensor, Output};
pub use validate::Problem;
