//! `budgets.toml`: per entry and arch, the most registers and shared memory
//! and the fewest blocks per multiprocessor.
//! The checks against it, and the rules every entry obeys, are in `check.rs`.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use kernel_builder::Arch;

use crate::occupancy::blocks_per_sm;
use crate::resources::Row;
use crate::util::Result;

/// What one entry may use on one arch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budget {
    /// Registers per thread.
    pub max_registers: u32,
    /// Shared memory per block, static + dynamic, in bytes.
    pub max_smem_bytes: u32,
    /// Blocks resident per multiprocessor (`occupancy::blocks_per_sm`): a
    /// register or shared memory rise that costs a block per SM fails the
    /// gate even within the other budgets.
    pub min_blocks_per_sm: u32,
    /// The most bytes of stack frame, of spill stores and of spill loads
    /// (each): 0, the global rule, unless `budgets.toml` says
    /// `max_spill_bytes` for the entry, with the measurement that kept the
    /// spill in a comment. `--update-budgets` keeps such allowances and
    /// never grants new ones.
    pub max_spill_bytes: u32,
}

/// Budgets by (entry, arch name).
pub type Budgets = BTreeMap<(String, String), Budget>;

/// The most shared memory one block can have on `arch` (opt-in maximum):
/// 227 KiB on sm_90, 99 KiB on sm_89.
pub fn smem_limit(arch: Arch) -> u32 {
    match arch.capability {
        (9, _) => 227 * 1024,
        (8, 9) | (8, 6) => 99 * 1024,
        _ => 48 * 1024,
    }
}

/// The budget `--update-budgets` writes for a figure: registers + 8 (at
/// most 255), shared memory rounded up past the next KiB (0 stays 0), the
/// current blocks per SM.
pub fn proposed(registers: u32, smem: u32, blocks_per_sm: u32) -> Budget {
    let max_smem_bytes = if smem == 0 { 0 } else { (smem / 1024 + 1) * 1024 };
    Budget {
        max_registers: (registers + 8).min(255),
        max_smem_bytes,
        min_blocks_per_sm: blocks_per_sm,
        max_spill_bytes: 0,
    }
}

/// Reads `path`; every key is checked, so a typo is an error, not a
/// budget silently ignored.
pub fn load(path: &Path) -> Result<Budgets> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        format!("cannot read {}: {e} (create it with `cargo xtask gate --update-budgets`)", path.display())
    })?;
    let table: toml::Table = text.parse().map_err(|e| format!("{}: {e}", path.display()))?;
    let mut budgets = Budgets::new();
    for (entry, archs) in &table {
        let archs = archs.as_table().ok_or_else(|| format!("{}: [{entry}] must be a table", path.display()))?;
        for (arch, budget) in archs {
            let at = format!("{}: {entry}.{arch}", path.display());
            let budget = budget.as_table().ok_or_else(|| format!("{at} must be a table"))?;
            let field = |key: &str| -> Result<u32> {
                let value = budget.get(key).ok_or_else(|| format!("{at} lacks `{key}`"))?;
                let n = value.as_integer().ok_or_else(|| format!("{at}.{key} must be an integer"))?;
                u32::try_from(n).map_err(|_| format!("{at}.{key} = {n} is out of range"))
            };
            const KEYS: [&str; 4] = ["max_registers", "max_smem_bytes", "min_blocks_per_sm", "max_spill_bytes"];
            if let Some(key) = budget.keys().find(|k| !KEYS.contains(&k.as_str())) {
                return Err(format!("{at}: unknown key `{key}` (known: {})", KEYS.join(", ")));
            }
            let b = Budget {
                max_registers: field("max_registers")?,
                max_smem_bytes: field("max_smem_bytes")?,
                min_blocks_per_sm: field("min_blocks_per_sm")?,
                max_spill_bytes: if budget.contains_key("max_spill_bytes") { field("max_spill_bytes")? } else { 0 },
            };
            budgets.insert((entry.clone(), arch.clone()), b);
        }
    }
    Ok(budgets)
}

/// Writes budgets proposed from the current figures of `rows` to `path`,
/// keeping the spill allowances of `kept` (the budgets it replaces).
pub fn write(path: &Path, rows: &[Row], kept: &Budgets) -> Result<()> {
    let mut text = String::from(
        "# Resource budgets checked by `cargo xtask gate`, per PTX entry and arch:\n\
         # the most registers per thread, the most shared memory per block\n\
         # (static + dynamic, bytes) and the fewest blocks resident per\n\
         # multiprocessor (xtask/src/occupancy.rs). Rules for every entry live in\n\
         # xtask/src/check.rs: no stack, no spills (unless an entry's\n\
         # `max_spill_bytes` allows some: kept by --update-budgets, granted by\n\
         # hand only), every KERNELS entry built, shared memory <= 227 KiB on\n\
         # sm_90a and <= 99 KiB on sm_89.\n\
         # `cargo xtask gate --update-budgets` rewrites this file from the current\n\
         # build: registers + 8 (at most 255), shared memory rounded up past the\n\
         # next KiB, the current blocks per SM. Tighten a budget by hand when a\n\
         # kernel gets leaner.\n",
    );
    let mut last_entry = "";
    for row in crate::resources::by_entry(rows) {
        let (Some(report), Some(smem)) = (&row.report, row.total_smem()) else {
            continue;
        };
        if row.entry != last_entry {
            let _ = write!(text, "\n[{}]\n", row.entry);
            last_entry = &row.entry;
        }
        let blocks = blocks_per_sm(row.arch, report.registers, row.threads, smem);
        let b = proposed(report.registers, smem, blocks);
        let spill = kept.get(&(row.entry.clone(), row.arch.name.to_string())).map_or(0, |k| k.max_spill_bytes);
        let allowance = if spill > 0 { format!(", max_spill_bytes = {spill}") } else { String::new() };
        let _ = writeln!(
            text,
            "{} = {{ max_registers = {}, max_smem_bytes = {}, min_blocks_per_sm = {}{allowance} }}",
            row.arch.name, b.max_registers, b.max_smem_bytes, b.min_blocks_per_sm
        );
    }
    std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}
