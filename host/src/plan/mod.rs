//! The host's policy: which kernel runs a problem. [`Plan::new`] takes a
//! validated problem and the caller's [`VariantChoice`], resolves `Auto` by
//! the recommendation ([`recommend`], by way of the cost model in
//! [`cost`]) and selects the kernel table's row once ([`select`]);
//! `Attention` launches what the plan holds.

pub mod cost;
pub mod recommend;
pub mod select;
pub mod target;
pub mod workload;

use crate::error::AttnError;
use crate::options::VariantChoice;
use crate::validate::Problem;
use kernels_gpu::kernels::{HEAD_DIMS, KernelInfo};
use kernels_gpu::variant::Variant;
use target::Target;
use workload::Workload;

/// A validated problem and the kernel that runs it on one target.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    problem: Problem,
    kernel: &'static KernelInfo,
}

impl Plan {
    /// The plan for `problem` on `target`: `choice`'s variant (the
    /// recommendation for `Auto`), in the kernel [`select::select`] picks
    /// for the problem's sizes and output type. Fails where the target
    /// cannot run that kernel (an sm_90a-only variant elsewhere).
    pub fn new(problem: Problem, choice: VariantChoice, target: Target) -> Result<Plan, AttnError> {
        let variant = match choice {
            VariantChoice::Auto => recommend::recommended(&Workload::of(&problem), target),
            VariantChoice::Fixed(v) => v,
        };
        let p = &problem;
        let kernel = select::select(variant, p.head_dim as u32, p.seq_q as u32, p.seq_kv as u32, p.causal, p.output)
            .ok_or(AttnError::UnsupportedHeadDim { head_dim: p.head_dim, supported: HEAD_DIMS.to_vec() })?;
        if kernel.sm90a_only && !target.sm90a {
            return Err(AttnError::VariantUnavailable {
                variant: variant.name(),
                reason: format!("{} needs an sm_90a (Hopper) GPU", kernel.entry),
            });
        }
        Ok(Plan { problem, kernel })
    }

    /// This plan with `kernel` instead of the selected one: for tests and
    /// benchmarks of a kernel that runs only on some problems (`wgmma-fp8pv`'s
    /// 192-key kernel, `split-n64`'s pair-row one). It must serve the
    /// problem's head dimension, output type and lengths.
    pub fn with_kernel(self, kernel: &'static KernelInfo) -> Result<Plan, AttnError> {
        let p = &self.problem;
        if kernel.tiles.head_dim as usize != p.head_dim || kernel.output != p.output {
            return Err(AttnError::KernelMismatch {
                entry: kernel.entry,
                head_dim: p.head_dim,
                output: p.output.name(),
            });
        }
        if !kernel.runs_on(p.seq_q as u32, p.seq_kv as u32) {
            return Err(AttnError::KernelLengths { entry: kernel.entry, seq_q: p.seq_q, seq_kv: p.seq_kv });
        }
        Ok(Plan { kernel, ..self })
    }

    /// The validated problem.
    pub fn problem(&self) -> &Problem {
        &self.problem
    }

    /// The kernel that runs it.
    pub fn kernel(&self) -> &'static KernelInfo {
        self.kernel
    }

    /// The variant that runs it.
    pub fn variant(&self) -> Variant {
        self.kernel.variant
    }
}
