//! Launch bounds in the PTX: rustc's nvptx target has no attribute for
//! CUDA's `__launch_bounds__`, so the builder adds the directives to the
//! entries of [`kernels_gpu::kernels::KERNELS`] that ask for them
//! ([`KernelInfo::min_blocks_per_sm`]).
//! An entry's performance directives sit between its parameter list and
//! its body:
//!
//! ```text
//! .visible .entry sdpa_split_wg_d64(
//!     .param .align 8 .b8 sdpa_split_wg_d64_param_0[160]
//! )
//! .maxntid 256, 1, 1
//! .minnctapersm 2
//! {
//! ```
//!
//! `.maxntid` promises ptxas the block size and `.minnctapersm` asks it to
//! fit that many blocks per SM in the register file.

use kernels_gpu::kernels::KERNELS;

/// One entry's launch bounds: its threads per block and the blocks per SM
/// ptxas must fit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchBounds {
    /// The PTX entry symbol.
    pub entry: &'static str,
    /// `.maxntid`: the block's threads (1-D blocks).
    pub threads: u32,
    /// `.minnctapersm`.
    pub blocks_per_sm: u32,
}

/// The launch bounds the kernel table asks for: its kernels' and their
/// twins' (`KernelInfo::twins`: packed, over their scores).
pub fn from_kernel_table() -> Vec<LaunchBounds> {
    let main = KERNELS.iter().map(|k| LaunchBounds {
        entry: k.entry,
        threads: k.threads(),
        blocks_per_sm: k.min_blocks_per_sm,
    });
    let twins = KERNELS.iter().flat_map(|k| {
        k.twins().map(|(entry, blocks_per_sm)| LaunchBounds { entry, threads: k.threads(), blocks_per_sm })
    });
    main.chain(twins).filter(|b| b.blocks_per_sm > 0).collect()
}

/// `ptx` with the directives of each of `bounds` after its entry's
/// parameter list. An entry not in `ptx` (one built for another arch only)
/// is left out; an entry whose parameter list does not close, or that
/// already declares launch bounds, is an error.
pub fn declare(ptx: &str, bounds: &[LaunchBounds]) -> Result<String, String> {
    let mut out = String::with_capacity(ptx.len() + 64 * bounds.len());
    // The entry whose parameter list is open, then the one just declared.
    let (mut open, mut declared): (Option<&LaunchBounds>, Option<&LaunchBounds>) = (None, None);
    for line in ptx.lines() {
        if let Some(b) = declared.take()
            && (line.starts_with(".maxntid") || line.starts_with(".minnctapersm"))
        {
            return Err(format!("{} already declares launch bounds", b.entry));
        }
        out.push_str(line);
        out.push('\n');
        if let Some(b) = bounds.iter().find(|b| is_entry_header(line, b.entry)) {
            open = Some(b);
        } else if let (Some(b), true) = (open, line.starts_with(')')) {
            out.push_str(&format!(".maxntid {}, 1, 1\n.minnctapersm {}\n", b.threads, b.blocks_per_sm));
            (open, declared) = (None, Some(b));
        }
    }
    match open {
        Some(b) => Err(format!("the parameter list of {} does not close", b.entry)),
        None => Ok(out),
    }
}

/// Whether `line` opens the declaration of `entry` (`.visible .entry name(`).
fn is_entry_header(line: &str, entry: &str) -> bool {
    line.strip_prefix(".visible .entry ")
        .and_then(|rest| rest.strip_prefix(entry))
        .is_some_and(|rest| rest.starts_with('('))
}

#[cfg(test)]
mod tests {
    use super::*;

    const PTX: &str = ".visible .entry a(\n\t.param .u64 a_param_0\n)\n{\n\tret;\n}\n.visible .entry ab(\n\t.param .u64 ab_param_0\n)\n{\n\tret;\n}\n";

    #[test]
    fn declares_after_the_named_entry_only() {
        let bounds = [LaunchBounds { entry: "a", threads: 256, blocks_per_sm: 2 }];
        let out = declare(PTX, &bounds).unwrap();
        assert_eq!(out.matches(".maxntid 256, 1, 1\n.minnctapersm 2\n").count(), 1);
        assert!(out.contains("a_param_0\n)\n.maxntid 256, 1, 1\n.minnctapersm 2\n{"));
        assert!(out.contains("ab_param_0\n)\n{"));
    }

    #[test]
    fn leaves_absent_entries_and_refuses_double_declarations() {
        let absent = [LaunchBounds { entry: "c", threads: 128, blocks_per_sm: 4 }];
        assert_eq!(declare(PTX, &absent).unwrap(), PTX);
        let bounds = [LaunchBounds { entry: "a", threads: 256, blocks_per_sm: 2 }];
        let once = declare(PTX, &bounds).unwrap();
        assert!(declare(&once, &bounds).is_err());
    }

    #[test]
    fn the_kernel_table_asks_for_split_wg_d64_at_two_blocks() {
        let bounds = from_kernel_table();
        assert!(bounds.contains(&LaunchBounds { entry: "sdpa_split_wg_d64", threads: 256, blocks_per_sm: 2 }));
    }
}
