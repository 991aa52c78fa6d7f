//! Tensors: FP8 inputs with per-head scales, in host memory or already on
//! the device, and the f16 or bf16 output.

use cudarc::driver::CudaSlice;
use half::{bf16, f16};
use kernels_gpu::variant::OutputDtype;

/// What validation reads of an input tensor, wherever its codes live:
/// [`Fp8Tensor`] (host) or [`DeviceFp8Tensor`] (device).
pub trait Fp8Input {
    /// `[batch, heads, seq, head_dim]`.
    fn shape(&self) -> [usize; 4];
    /// How many E4M3 codes the buffer holds (the product of the shape, if
    /// the tensor is well formed).
    fn code_count(&self) -> usize;
    /// One dequantization scale per head.
    fn scales(&self) -> &[f32];
}

/// An E4M3 tensor `[batch, heads, seq, head_dim]` in device memory (made by
/// `Attention::to_device`, or by the caller on the device and stream of
/// `Attention::stream`), contiguous row-major, with its per-head
/// dequantization scales on the host (validation reads them; the kernels
/// get a device copy).
#[derive(Debug)]
pub struct DeviceFp8Tensor {
    /// E4M3 codes, `batch * heads * seq * head_dim` of them.
    pub data: CudaSlice<u8>,
    /// `[batch, heads, seq, head_dim]`.
    pub shape: [usize; 4],
    /// One scale per head.
    pub scales: Vec<f32>,
}

/// [`Fp8Input`] for tensor types whose fields are `data` (a buffer with
/// `len()`), `shape` and `scales`.
macro_rules! fp8_input_from_fields {
    ($($tensor:ty),*) => {$(
        impl Fp8Input for $tensor {
            fn shape(&self) -> [usize; 4] {
                self.shape
            }
            fn code_count(&self) -> usize {
                self.data.len()
            }
            fn scales(&self) -> &[f32] {
                &self.scales
            }
        }
    )*};
}

fp8_input_from_fields!(Fp8Tensor, DeviceFp8Tensor);

/// An E4M3 tensor `[batch, heads, seq, head_dim]` in host memory, contiguous
/// row-major, with one f32 dequantization scale per head
/// (real value = fp8 value * `scales[head]`).
#[derive(Clone, Debug, PartialEq)]
pub struct Fp8Tensor {
    /// E4M3 codes, `batch * heads * seq * head_dim` of them.
    pub data: Vec<u8>,
    /// `[batch, heads, seq, head_dim]`.
    pub shape: [usize; 4],
    /// One scale per head.
    pub scales: Vec<f32>,
}

impl Fp8Tensor {
    /// Batch size.
    pub fn batch(&self) -> usize {
        self.shape[0]
    }
    /// Heads.
    pub fn heads(&self) -> usize {
        self.shape[1]
    }
    /// Sequence length.
    pub fn seq(&self) -> usize {
        self.shape[2]
    }
    /// Head dimension.
    pub fn head_dim(&self) -> usize {
        self.shape[3]
    }
    /// The dequantized value at `[b, h, s, d]` (no bounds check beyond the slice's).
    pub fn value(&self, b: usize, h: usize, s: usize, d: usize) -> f64 {
        let [_, heads, seq, dim] = self.shape;
        let code = self.data[((b * heads + h) * seq + s) * dim + d];
        kernels_gpu::fp8::e4m3_to_f32(code) as f64 * self.scales[h] as f64
    }
}

/// The attention output `[batch, heads_q, seq_q, head_dim]`: 16-bit
/// elements of the type the options asked for (`Options::output`).
#[derive(Clone, Debug, PartialEq)]
pub struct Output {
    /// The elements' bits, row-major.
    pub bits: Vec<u16>,
    /// What the bits are: f16 or bf16.
    pub dtype: OutputDtype,
    /// `[batch, heads_q, seq_q, head_dim]`.
    pub shape: [usize; 4],
}

impl Output {
    /// Element `i` as f32 (exact for both types).
    pub fn value(&self, i: usize) -> f32 {
        to_f32(self.dtype, self.bits[i])
    }

    /// Every element as f32 (exact), row-major.
    pub fn values(&self) -> Vec<f32> {
        self.bits.iter().map(|&b| to_f32(self.dtype, b)).collect()
    }
}

/// The value of 16 bits of `dtype`.
pub fn to_f32(dtype: OutputDtype, bits: u16) -> f32 {
    match dtype {
        OutputDtype::F16 => f16::from_bits(bits).to_f32(),
        OutputDtype::Bf16 => bf16::from_bits(bits).to_f32(),
    }
}
