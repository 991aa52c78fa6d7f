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
use crate::options::{Layout, VariantChoice};
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
/// recommendation's variant has no twin for it (`auto_variant`): the
/// accurate `wgmma` where the sm_90a image is loaded, else `split`.
pub fn scores_default(target: Target) -> Variant {
    if target.sm90a { Variant::Wgmma } else { Variant::Split }
}

/// The variant a plan that names none runs `p` on: the recommendation;
/// for a packed batch or `[B, S, H, D]` tensors that it does not read
/// itself, [`PACKED_DEFAULT`]; for a window or a cap it has no twin for,
/// [`scores_default`].
fn auto_variant(p: &Problem, target: Target) -> Variant {
    let recommended = recommend::recommended(&Workload::of(p), target);
    let variant =
        if p.interleaved_rows().is_none() || reads_bshd_itself(recommended, p) { recommended } else { PACKED_DEFAULT };
    let scores = p.score_form();
    let twin_rows = runs_packed_twin(variant, p);
    let twins = find(variant, p.head_dim as u32).is_some_and(|k| k.entry_for(twin_rows, scores).is_some());
    if scores == ScoreForm::Plain || twins { variant } else { scores_default(target) }
}

/// The variants whose kernels serve sliding windows and softcaps
/// ([`KernelInfo::scores`]), for errors.
pub const SCORES_SUPPORTED: &str = "wgmma, wgmma-fp8pv and split-n64 (sm_90a), mma, split, decode";

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
        let variant = match choice {
            VariantChoice::Auto => auto_variant(&problem, target),
            VariantChoice::Fixed(v) => v,
        };
        let twin_rows = runs_packed_twin(variant, &problem);
        let p = &problem;
        if variant == Variant::Decode && twin_rows && p.packed.is_none() {
            return Err(AttnError::LayoutUnavailable {
                layout: p.layout.name(),
                reason: format!(
                    "decode reads [B, S, H, D] caches with one query row per sequence, not {}; \
                     wgmma runs the rest",
                    p.seq_q
                ),
            });
        }
        let kernel = match (twin_rows, scores) {
            (false, ScoreForm::Plain) => {
                select::select(variant, p.head_dim as u32, p.seq_q as u32, p.seq_kv as u32, p.causal, p.output)
            }
            // The score twins are the plain kernel's (not the 192-key or
            // pair-row ones).
            (false, _) => find(variant, p.head_dim as u32).map(|k| k.writing(p.output)),
            (true, _) => select::packed(variant, p.head_dim as u32, p.output, p.layout)?,
        }
        .ok_or(AttnError::UnsupportedHeadDim { head_dim: p.head_dim, supported: HEAD_DIMS.to_vec() })?;
        if kernel.entry_for(twin_rows, scores).is_none() {
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
        let packed_blocks = if twin_rows { p.packed_query_blocks(kernel.tiles.block_m) } else { 0 };
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
        let twin_rows = runs_packed_twin(kernel.variant, p);
        if twin_rows && kernel.packed.is_none() {
            return Err(select::without_packed_twin(kernel.variant, p.layout));
        }
        if kernel.entry_for(twin_rows, p.score_form()).is_none() {
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
        self.kernel.entry_for(runs_packed_twin(self.kernel.variant, p), p.score_form()).unwrap_or(self.kernel.entry)
    }
}

/// Whether `variant` reads `p`'s `[B, S, H, D]` tensors in its own
/// entries: `decode` with one query row per sequence, which lies alike in
/// both layouts, its key walk taking the cache's heads side by side.
fn reads_bshd_itself(variant: Variant, p: &Problem) -> bool {
    variant == Variant::Decode && p.packed.is_none() && p.layout == Layout::Bshd && p.seq_q == 1
}

/// Whether `variant` runs `p` in its packed twins: a packed batch, or
/// `[B, S, H, D]` tensors that the variant does not read itself.
fn runs_packed_twin(variant: Variant, p: &Problem) -> bool {
    p.interleaved_rows().is_some() && !reads_bshd_itself(variant, p)
}

/// The error for a variant or kernel `what` without an entry for `p`'s
/// scores.
fn unsupported_scores(what: &'static str, p: &Problem) -> AttnError {
    let feature = if p.softcap.is_some() { "a softcap" } else { "a sliding window" };
    AttnError::UnsupportedScores { what, feature, supported: SCORES_SUPPORTED }
}
