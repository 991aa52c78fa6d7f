//! The host's policy: which kernel runs a problem. [`Plan::new`] takes a
//! validated problem and the caller's [`VariantChoice`], resolves `Auto` by
//! the recommendation ([`recommend`], by way of the cost model in
//! [`cost`]) and selects the kernel table's row once ([`select`]);
//! `Attention` launches what the plan holds.

pub mod cost;
pub mod key_splits;
pub mod recommend;
pub mod select;
pub mod target;
pub mod workload;

use crate::error::AttnError;
use crate::options::VariantChoice;
use crate::validate::Problem;
use kernels_gpu::kernels::{HEAD_DIMS, KernelInfo, ScoreForm, find};
use kernels_gpu::schedule::MAX_GRID_YZ;
use kernels_gpu::variant::Variant;
use target::Target;
use workload::Workload;

/// The variant that runs a packed batch or `[B, S, H, D]` tensors unless
/// the caller names one: the accurate `wgmma` (f16 P·V).
pub const PACKED_DEFAULT: Variant = Variant::Wgmma;

/// The variant that runs a sliding window or a softcap where the
/// recommendation's variant has no kernel for them: the accurate `wgmma`.
pub const SCORES_DEFAULT: Variant = Variant::Wgmma;

/// The variants whose kernels serve sliding windows and softcaps
/// ([`KernelInfo::scores`]), for errors.
const SCORES_SUPPORTED: &str = "wgmma and wgmma-fp8pv (sm_90a), decode";

/// A validated problem and the kernel that runs it on one target.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    problem: Problem,
    kernel: &'static KernelInfo,
    /// Blocks sharing each folded head's keys, and keys per block
    /// (`decode`; `(1, 0)` for the other kernels).
    key_splits: (u32, u32),
}

impl Plan {
    /// The plan for `problem` on `target`: `choice`'s variant (the
    /// recommendation for `Auto`), in the kernel [`select::select`] picks
    /// for the problem's sizes and output type. Fails where the target
    /// cannot run that kernel (an sm_90a-only variant elsewhere).
    pub fn new(problem: Problem, choice: VariantChoice, target: Target) -> Result<Plan, AttnError> {
        let scores = problem.score_form();
        let interleaved = problem.interleaved_rows().is_some();
        let variant = match (choice, problem.interleaved_rows()) {
            (VariantChoice::Auto, None) => recommend::recommended(&Workload::of(&problem), target),
            (VariantChoice::Auto, Some(_)) => PACKED_DEFAULT,
            (VariantChoice::Fixed(v), _) => v,
        };
        let variant = match (choice, scores) {
            (VariantChoice::Auto, ScoreForm::Window | ScoreForm::Softcap)
                if find(variant, problem.head_dim as u32)
                    .is_none_or(|k| k.entry_for(interleaved, scores).is_none()) =>
            {
                SCORES_DEFAULT
            }
            _ => variant,
        };
        let p = &problem;
        let kernel = match (p.interleaved_rows(), scores) {
            (None, ScoreForm::Plain) => {
                select::select(variant, p.head_dim as u32, p.seq_q as u32, p.seq_kv as u32, p.causal, p.output)
            }
            // The score twins are the plain kernel's (not the 192-key or
            // pair-row ones).
            (None, _) => find(variant, p.head_dim as u32).map(|k| k.writing(p.output)),
            (Some(_), _) => select::packed(variant, p.head_dim as u32, p.output, p.layout)?,
        }
        .ok_or(AttnError::UnsupportedHeadDim { head_dim: p.head_dim, supported: HEAD_DIMS.to_vec() })?;
        if kernel.entry_for(interleaved, scores).is_none() {
            return Err(unsupported_scores(variant.name(), p));
        }
        if kernel.sm90a_only && !target.sm90a {
            return Err(AttnError::VariantUnavailable {
                variant: variant.name(),
                reason: format!("{} needs an sm_90a (Hopper) GPU", kernel.entry),
            });
        }
        let folded_heads = p.folded_heads();
        if kernel.merge.is_some() && folded_heads > MAX_GRID_YZ as usize {
            return Err(AttnError::VariantUnavailable {
                variant: variant.name(),
                reason: format!("batch x key/value heads is {folded_heads}, above the grid's {MAX_GRID_YZ}"),
            });
        }
        let packed_blocks = p.packed_query_blocks(kernel.tiles.block_m);
        if packed_blocks > MAX_GRID_YZ as usize {
            return Err(AttnError::TooLarge(format!(
                "{packed_blocks} query blocks of {} rows over the batch's sequences exceed the grid's {MAX_GRID_YZ}",
                kernel.tiles.block_m
            )));
        }
        let key_splits = Plan::key_splits_of(&problem, kernel, target);
        Ok(Plan { problem, kernel, key_splits })
    }

    /// The key splits of `problem` under `kernel` (see [`key_splits`]).
    fn key_splits_of(problem: &Problem, kernel: &'static KernelInfo, target: Target) -> (u32, u32) {
        if kernel.merge.is_some() { key_splits::key_splits(problem, kernel, target.multiprocessors) } else { (1, 0) }
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
        if p.interleaved_rows().is_some() && kernel.packed.is_none() {
            return Err(select::without_packed_twin(kernel.variant, p.layout));
        }
        if kernel.entry_for(p.interleaved_rows().is_some(), p.score_form()).is_none() {
            return Err(unsupported_scores(kernel.entry, p));
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

    /// How many blocks share each folded head's keys (`decode`; 1 for the
    /// other kernels).
    pub fn kv_splits(&self) -> u32 {
        self.key_splits.0
    }

    /// Keys per split (`decode`; 0 for the other kernels).
    pub fn split_keys(&self) -> u32 {
        self.key_splits.1
    }

    /// The variant that runs it.
    pub fn variant(&self) -> Variant {
        self.kernel.variant
    }

    /// The PTX entry that runs it: the kernel's, or its twin's for a
    /// packed batch or `[B, S, H, D]` tensors and for the problem's scores
    /// ([`KernelInfo::entry_for`]; the plan was only made where one
    /// exists).
    pub fn entry(&self) -> &'static str {
        let p = &self.problem;
        self.kernel.entry_for(p.interleaved_rows().is_some(), p.score_form()).unwrap_or(self.kernel.entry)
    }
}

/// The error for a variant or kernel `what` without an entry for `p`'s
/// scores.
fn unsupported_scores(what: &'static str, p: &Problem) -> AttnError {
    let feature = if p.softcap.is_some() { "a softcap" } else { "a sliding window" };
    AttnError::UnsupportedScores { what, feature, supported: SCORES_SUPPORTED }
}
