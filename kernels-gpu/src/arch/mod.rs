//! Thin wrappers over the PTX instructions the kernels use. This is the only
//! module with inline assembly; each wrapper names the instruction it emits
//! and the operand layout it expects.
//!
//! Wrappers that only read special registers or registers are safe; those
//! that touch memory, or that require warp/block convergence, are `unsafe`
//! and state their contract under `# Safety`.

pub mod bar;
pub mod bulk;
pub mod cp_async;
pub mod cvt;
pub mod fence;
pub mod grid_dep;
pub mod ldmatrix;
pub mod math;
pub mod mbarrier;
pub mod mma;
pub mod quant;
pub mod shfl;
pub mod smem;
pub mod sreg;
pub mod tma;
pub mod wgmma;
