//! Host tensors: FP8 inputs with per-head scales, and the f16 output.

use half::f16;

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

/// The attention output `[batch, heads_q, seq_q, head_dim]` in f16.
#[derive(Clone, Debug, PartialEq)]
pub struct Output {
    /// f16 values, row-major.
    pub data: Vec<f16>,
    /// `[batch, heads_q, seq_q, head_dim]`.
    pub shape: [usize; 4],
}
