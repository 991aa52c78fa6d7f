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

use std::sync::{Arc, Mutex, PoisonError};

use cudarc::driver::{CudaFunction, CudaSlice, CudaStream, DevicePtr, LaunchConfig};
pub use kernels_gpu::quantize::{InputDtype, Rotation};
use kernels_gpu::quantize::{
    MAX_TENSORS, QUANTIZE_KERNELS, QuantizeKernel, QuantizeParams, QuantizeTensor, THREADS, blocks, lag_units,
    scratch_words, tile_rows,
};

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

/// One tensor of a [`Quantizer::quantize_into`] call: its input, rotation
/// and where its codes and scales go.
pub struct QuantizeJob<'a> {
    /// The float tensor.
    pub input: &'a DeviceFloatTensor,
    /// Its rows' rotation (give Q and K the same one, V none).
    pub rotation: Rotation,
    /// One byte per element (allocations from cudarc are 256-byte aligned;
    /// the kernel needs 8).
    pub codes: &'a mut CudaSlice<u8>,
    /// One f32 per scale group: `H` for [`ScaleGroup::PerHead`], `B * H` for
    /// [`ScaleGroup::PerBatchHead`], indexed `b * H + h`.
    pub scales: &'a mut CudaSlice<f32>,
}

/// The quantizer's kernels, loaded on an [`Attention`]'s context; it runs on
/// that `Attention`'s stream.
pub struct Quantizer {
    stream: Arc<CudaStream>,
    functions: Vec<(&'static QuantizeKernel, CudaFunction)>,
    /// The kernel's counters (zero between launches: each launch leaves
    /// them zero), grown to the largest call so far.
    scratch: Mutex<Option<CudaSlice<u32>>>,
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
        Ok(Quantizer { stream, functions, scratch: Mutex::new(None) })
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
    /// As [`Quantizer::quantize_many`].
    pub fn quantize(&self, input: &DeviceFloatTensor, rotation: Rotation) -> Result<DeviceFp8Tensor, AttnError> {
        let mut out = self.quantize_many(&[(input, rotation)])?;
        out.pop().ok_or_else(|| AttnError::ShapeMismatch("the quantizer returned no tensor".to_string()))
    }

    /// Quantizes up to three tensors of one shape and element type (Q, K and
    /// V) in one launch, each with one scale per head and its own rotation,
    /// and returns their codes on the device with the scales copied to the
    /// host (this waits for the stream).
    ///
    /// # Errors
    /// As [`Quantizer::quantize_into`]; [`AttnError::InvalidScale`] when a
    /// head's scale is not finite and positive (a NaN or infinity in the
    /// head, or values whose `amax / 448` underflows).
    pub fn quantize_many(&self, inputs: &[(&DeviceFloatTensor, Rotation)]) -> Result<Vec<DeviceFp8Tensor>, AttnError> {
        let mut outputs = Vec::with_capacity(inputs.len());
        for (input, _) in inputs {
            let codes = self.stream.alloc_zeros::<u8>(element_count(input.shape)?)?;
            let scales = self.stream.alloc_zeros::<f32>(input.shape[1])?;
            outputs.push((codes, scales));
        }
        let mut jobs: Vec<QuantizeJob<'_>> = inputs
            .iter()
            .zip(outputs.iter_mut())
            .map(|(&(input, rotation), (codes, scales))| QuantizeJob { input, rotation, codes, scales })
            .collect();
        self.quantize_into(&mut jobs, ScaleGroup::PerHead)?;
        drop(jobs);
        let mut tensors = Vec::with_capacity(inputs.len());
        for ((input, _), (codes, scales)) in inputs.iter().zip(outputs) {
            let scales = self.stream.clone_dtoh(&scales)?;
            if let Some((h, &s)) = scales.iter().enumerate().find(|(_, s)| !(s.is_finite() && **s > 0.0)) {
                return Err(AttnError::InvalidScale { what: format!("quantizer scale of head {h}"), value: s });
            }
            tensors.push(DeviceFp8Tensor { data: codes, shape: input.shape, scales });
        }
        Ok(tensors)
    }

    /// Quantizes each job's input into its `codes` and `scales` with one
    /// launch (nothing allocated after the first call of a size, nothing
    /// waited for). Every job's input has the same shape and element type;
    /// at most three jobs; none is a no-op. The scales are not checked (see
    /// [`Quantizer::quantize_many`]).
    ///
    /// # Errors
    /// [`AttnError::ShapeMismatch`] for inputs of different shapes or
    /// element types; [`AttnError::UnsupportedHeadDim`] for a head dim other
    /// than 64 or 128; [`AttnError::ZeroDimension`] for an empty shape;
    /// [`AttnError::BufferLength`] when a buffer is shorter than the shape
    /// needs; [`AttnError::TooLarge`] for more than three jobs or sizes past
    /// the kernel's `u32` counts; [`AttnError::Driver`] from the allocation
    /// or the launch.
    pub fn quantize_into(&self, jobs: &mut [QuantizeJob<'_>], group: ScaleGroup) -> Result<(), AttnError> {
        let Some(first) = jobs.first() else { return Ok(()) };
        let (shape, dtype) = (first.input.shape, first.input.dtype);
        if jobs.len() > MAX_TENSORS {
            return Err(AttnError::TooLarge(format!(
                "{} tensors in one quantizer call (at most {MAX_TENSORS})",
                jobs.len()
            )));
        }
        if let Some(job) = jobs.iter().find(|j| j.input.shape != shape || j.input.dtype != dtype) {
            return Err(AttnError::ShapeMismatch(format!(
                "quantizer inputs of one call share shape and type: {shape:?} {dtype:?} and {:?} {:?}",
                job.input.shape, job.input.dtype
            )));
        }
        let [batch, heads, _, head_dim] = shape;
        if shape.contains(&0) {
            return Err(AttnError::ZeroDimension { tensor: "quantizer input", shape });
        }
        let elements = element_count(shape)?;
        let groups = match group {
            ScaleGroup::PerHead => heads,
            ScaleGroup::PerBatchHead => batch * heads,
        };
        for job in jobs.iter() {
            for (tensor, expected, actual) in [
                ("quantizer input bytes", elements * dtype.bytes(), job.input.data.len()),
                ("quantizer codes", elements, job.codes.len()),
                ("quantizer scales", groups, job.scales.len()),
            ] {
                if actual < expected {
                    return Err(AttnError::BufferLength { tensor: tensor.to_string(), expected, actual });
                }
            }
        }
        let Some((_, function)) =
            self.functions.iter().find(|(k, _)| k.input == dtype && k.head_dim as usize == head_dim)
        else {
            return Err(AttnError::UnsupportedHeadDim { head_dim, supported: vec![64, 128] });
        };
        let counts = Counts::new(shape, groups, jobs.len(), dtype, group).ok_or_else(|| {
            AttnError::TooLarge(format!(
                "quantizer shape {shape:?} with {} tensors: its tile counts must fit u32",
                jobs.len()
            ))
        })?;
        let mut tensors = [QuantizeTensor::default(); MAX_TENSORS];
        for (slot, job) in tensors.iter_mut().zip(jobs.iter()) {
            *slot = QuantizeTensor {
                input: job.input.data.device_ptr(&self.stream).0,
                codes: job.codes.device_ptr(&self.stream).0,
                scales: job.scales.device_ptr(&self.stream).0,
                rotation: job.rotation.code(),
                reserved: 0,
            };
        }
        let mut kept = self.scratch.lock().unwrap_or_else(PoisonError::into_inner);
        let words = scratch_words(jobs.len() * groups);
        let scratch = match kept.take() {
            Some(scratch) if scratch.len() >= words => scratch,
            _ => self.stream.alloc_zeros::<u32>(words)?,
        };
        let params = QuantizeParams {
            tensors,
            scratch: scratch.device_ptr(&self.stream).0,
            seq: counts.seq,
            heads: counts.heads,
            group_batch_stride: counts.group_batch_stride,
            groups: counts.groups,
            row_tiles: counts.row_tiles,
            tiles_per_unit: counts.tiles_per_unit,
            tiles_per_pass: counts.tiles_per_pass,
            lag_tiles: counts.lag_tiles,
        };
        let cfg = LaunchConfig {
            grid_dim: (blocks(counts.tiles_per_pass), 1, 1),
            block_dim: (THREADS, 1, 1),
            shared_mem_bytes: 0,
        };
        let launched = launch::launch_quantize(&self.stream, function, cfg, params);
        // Kept only after a launch that will leave it zero.
        if launched.is_ok() {
            *kept = Some(scratch);
        }
        Ok(launched?)
    }
}

/// The kernel's counts for one call (see `kernels_gpu::quantize::QuantizeParams`).
struct Counts {
    seq: u32,
    heads: u32,
    group_batch_stride: u32,
    groups: u32,
    row_tiles: u32,
    tiles_per_unit: u32,
    tiles_per_pass: u32,
    lag_tiles: u32,
}

impl Counts {
    /// The counts of `tensors` tensors of `shape` in `groups` scale groups,
    /// or `None` when one does not fit the kernel's `u32` arithmetic (`S`
    /// plus a tile, and twice the tiles of a pass: the warps).
    fn new(shape: [usize; 4], groups: usize, tensors: usize, dtype: InputDtype, group: ScaleGroup) -> Option<Counts> {
        let [batch, heads, seq, head_dim] = shape;
        let fit = |x: usize| u32::try_from(x).ok();
        let rows = tile_rows(u32::try_from(head_dim).ok()?) as usize;
        let row_tiles = seq.div_ceil(rows);
        fit(row_tiles.checked_mul(rows)?)?;
        let batches_per_group = match group {
            ScaleGroup::PerHead => batch,
            ScaleGroup::PerBatchHead => 1,
        };
        let tiles_per_unit = batches_per_group.checked_mul(row_tiles)?;
        let units = tensors.checked_mul(groups)?;
        let tiles_per_pass = units.checked_mul(tiles_per_unit)?;
        fit(tiles_per_pass.checked_mul(2)?)?;
        let unit_bytes = tiles_per_unit.saturating_mul(rows * head_dim * dtype.bytes());
        let lag_tiles = lag_units(fit(units)?, unit_bytes) as usize * tiles_per_unit;
        Some(Counts {
            seq: fit(seq)?,
            heads: fit(heads)?,
            group_batch_stride: match group {
                ScaleGroup::PerHead => 0,
                ScaleGroup::PerBatchHead => fit(heads)?,
            },
            groups: fit(groups)?,
            row_tiles: fit(row_tiles)?,
            tiles_per_unit: fit(tiles_per_unit)?,
            tiles_per_pass: fit(tiles_per_pass)?,
            lag_tiles: fit(lag_tiles)?,
        })
    }
}

/// The element count of `shape`, or [`AttnError::TooLarge`].
fn element_count(shape: [usize; 4]) -> Result<usize, AttnError> {
    shape
        .iter()
        .try_fold(1usize, |n, &x| n.checked_mul(x))
        .ok_or_else(|| AttnError::TooLarge(format!("quantizer shape {shape:?} has more elements than usize holds")))
}
