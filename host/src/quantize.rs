//! The FP8 quantizer on the GPU: float tensors (f16, bf16, f32) on the
//! device in, E4M3 codes and dequantization scales out, Q and K optionally
//! rotated by the normalised Walsh–Hadamard matrix (which cancels in
//! `Q·Kᵀ`; see [`Rotation`]). The kernels are `kernels_gpu::quantize`'s;
//! [`crate::quant::quantize_as_gpu`] is their CPU reference, bit for bit.
//!
//! ```no_run
//! # fn main() -> Result<(), sdpa::AttnError> {
//! use sdpa::quantize::{DeviceFloatTensor, InputDtype, Quantizer, Rotation};
//! let attn = sdpa::Attention::new(0)?;
//! let quantizer = Quantizer::new(&attn)?;
//! let shape = [1, 8, 1024, 128];
//! let bytes = vec![0u8; shape.iter().product::<usize>() * 2]; // f16 values
//! let q = DeviceFloatTensor { data: attn.stream().clone_htod(&bytes)?, dtype: InputDtype::F16, shape };
//! let q8 = quantizer.quantize(&q, Rotation::Hadamard)?; // rotate K alike
//! # let _ = q8; Ok(()) }
//! ```

use std::sync::Arc;

use cudarc::driver::{CudaFunction, CudaSlice, CudaStream, DevicePtr, LaunchConfig};
pub use kernels_gpu::quantize::{InputDtype, Rotation};
use kernels_gpu::quantize::{Pass, QUANTIZE_KERNELS, QuantizeKernel, QuantizeParams, THREADS, grid};

use crate::attention::Attention;
use crate::error::AttnError;
use crate::launch;
use crate::quant::ScaleGroup;
use crate::tensor::DeviceFp8Tensor;

/// A float tensor `[batch, heads, seq, head_dim]` in device memory,
/// contiguous row-major, its elements' little-endian bytes in `data`.
#[derive(Debug)]
pub struct DeviceFloatTensor {
    /// `batch * heads * seq * head_dim * dtype.bytes()` bytes, on the
    /// quantizer's stream (allocations from cudarc are 256-byte aligned; the
    /// kernels need 16).
    pub data: CudaSlice<u8>,
    /// The element type.
    pub dtype: InputDtype,
    /// `[batch, heads, seq, head_dim]`.
    pub shape: [usize; 4],
}

/// The quantizer's kernels, loaded on an [`Attention`]'s context; it runs on
/// that `Attention`'s stream.
pub struct Quantizer {
    stream: Arc<CudaStream>,
    functions: Vec<(&'static QuantizeKernel, CudaFunction)>,
}

impl Quantizer {
    /// Loads the quantizer's entries from the image `attention` loaded, on
    /// its context; work goes to [`Attention::stream`].
    ///
    /// # Errors
    /// [`AttnError::Driver`] when the module or an entry cannot be loaded.
    pub fn new(attention: &Attention) -> Result<Quantizer, AttnError> {
        let stream = attention.stream().clone();
        let module = stream.context().load_module(attention.load().module())?;
        let functions = QUANTIZE_KERNELS
            .iter()
            .map(|k| Ok((k, module.load_function(k.entry)?)))
            .collect::<Result<Vec<_>, AttnError>>()?;
        Ok(Quantizer { stream, functions })
    }

    /// The stream the quantizer runs on (the `Attention`'s).
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    /// Quantizes `input` with one scale per head (as the attention kernels
    /// take them), rotating its rows as `rotation` says (give Q and K the
    /// same rotation, V none), and returns the codes on the device with the
    /// scales copied to the host (this waits for the stream).
    ///
    /// # Errors
    /// As [`Quantizer::quantize_into`]; [`AttnError::InvalidScale`] when a
    /// head's scale is not finite and positive (a NaN or infinity in the
    /// head, or values whose `amax / 448` underflows).
    pub fn quantize(&self, input: &DeviceFloatTensor, rotation: Rotation) -> Result<DeviceFp8Tensor, AttnError> {
        let [_, heads, ..] = input.shape;
        let mut codes = self.stream.alloc_zeros::<u8>(element_count(input.shape)?)?;
        let mut scales = self.stream.alloc_zeros::<f32>(heads)?;
        let mut amax = self.stream.alloc_zeros::<u32>(heads)?;
        self.quantize_into(input, rotation, ScaleGroup::PerHead, &mut codes, &mut scales, &mut amax)?;
        let scales = self.stream.clone_dtoh(&scales)?;
        if let Some((h, &s)) = scales.iter().enumerate().find(|(_, s)| !(s.is_finite() && **s > 0.0)) {
            return Err(AttnError::InvalidScale { what: format!("quantizer scale of head {h}"), value: s });
        }
        Ok(DeviceFp8Tensor { data: codes, shape: input.shape, scales })
    }

    /// Quantizes `input` into `codes` (one byte per element) and `scales`
    /// (one f32 per scale group: `H` for [`ScaleGroup::PerHead`], `B * H`
    /// for [`ScaleGroup::PerBatchHead`], indexed `b * H + h`), using `amax`
    /// (one u32 per group) as scratch: three stream operations (zero
    /// `amax`, the amax pass, the encode pass), nothing allocated, nothing
    /// waited for. The scales are not checked (see [`Quantizer::quantize`]).
    ///
    /// # Errors
    /// [`AttnError::UnsupportedHeadDim`] for a head dim other than 64 or 128;
    /// [`AttnError::ZeroDimension`] for an empty shape;
    /// [`AttnError::BufferLength`] when a buffer is shorter than the shape
    /// needs; [`AttnError::TooLarge`] beyond the grid's limits (`S`, `H` and
    /// `B` must fit its dimensions); [`AttnError::Driver`] from the launch.
    pub fn quantize_into(
        &self,
        input: &DeviceFloatTensor,
        rotation: Rotation,
        group: ScaleGroup,
        codes: &mut CudaSlice<u8>,
        scales: &mut CudaSlice<f32>,
        amax: &mut CudaSlice<u32>,
    ) -> Result<(), AttnError> {
        let shape = input.shape;
        let [batch, heads, seq, head_dim] = shape;
        if shape.contains(&0) {
            return Err(AttnError::ZeroDimension { tensor: "quantizer input", shape });
        }
        let elements = element_count(shape)?;
        let groups = match group {
            ScaleGroup::PerHead => heads,
            ScaleGroup::PerBatchHead => batch * heads,
        };
        for (tensor, expected, actual) in [
            ("quantizer input bytes", elements * input.dtype.bytes(), input.data.len()),
            ("quantizer codes", elements, codes.len()),
            ("quantizer scales", groups, scales.len()),
            ("quantizer amax scratch", groups, amax.len()),
        ] {
            if actual < expected {
                return Err(AttnError::BufferLength { tensor: tensor.to_string(), expected, actual });
            }
        }
        let [amax_pass, encode_pass] = [Pass::Amax, Pass::Encode].map(|pass| {
            self.functions
                .iter()
                .find(|(k, _)| {
                    k.input == input.dtype
                        && k.head_dim as usize == head_dim
                        && k.rotation == rotation
                        && k.pass == pass
                })
                .map(|(_, f)| f)
        });
        let (Some(amax_pass), Some(encode_pass)) = (amax_pass, encode_pass) else {
            return Err(AttnError::UnsupportedHeadDim { head_dim, supported: vec![64, 128] });
        };
        let fits = |x: usize, limit: u32| u32::try_from(x).ok().filter(|&x| x <= limit);
        let (Some(seq32), Some(heads32), Some(batch32)) =
            (fits(seq, u32::MAX), fits(heads, 65_535), fits(batch, 65_535))
        else {
            return Err(AttnError::TooLarge(format!(
                "quantizer shape {shape:?}: S must fit u32, H and B at most 65535 (grid y and z)"
            )));
        };
        let params = QuantizeParams {
            input: input.data.device_ptr(&self.stream).0,
            codes: codes.device_ptr(&self.stream).0,
            amax: amax.device_ptr(&self.stream).0,
            scales: scales.device_ptr(&self.stream).0,
            seq: seq32,
            heads: heads32,
            group_batch_stride: match group {
                ScaleGroup::PerHead => 0,
                ScaleGroup::PerBatchHead => heads32,
            },
            reserved: 0,
        };
        let cfg =
            LaunchConfig { grid_dim: grid(batch32, heads32, seq32), block_dim: (THREADS, 1, 1), shared_mem_bytes: 0 };
        self.stream.memset_zeros(amax)?;
        launch::launch_quantize(&self.stream, amax_pass, cfg, params)?;
        launch::launch_quantize(&self.stream, encode_pass, cfg, params)?;
        Ok(())
    }
}

/// The element count of `shape`, or [`AttnError::TooLarge`].
fn element_count(shape: [usize; 4]) -> Result<usize, AttnError> {
    shape
        .iter()
        .try_fold(1usize, |n, &x| n.checked_mul(x))
        .ok_or_else(|| AttnError::TooLarge(format!("quantizer shape {shape:?} has more elements than usize holds")))
}
