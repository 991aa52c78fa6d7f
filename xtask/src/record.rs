//! The JSON record of a resource gate run: `baselines/<YYYY-MM-DD>-gate-resources.json`.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::json;

use crate::budgets::Budgets;
use crate::occupancy::blocks_per_sm;
use crate::resources::Row;
use crate::util::{self, Result};

/// Writes the record of `rows` (with their budgets) and `violations`, and
/// returns its path.
pub fn write(ws: &Path, rows: &[Row], budgets: &Budgets, violations: &[String], ptxas: &str) -> Result<PathBuf> {
    let git = |args: &[&str]| util::output(Command::new("git").current_dir(ws).args(args));
    let commit = git(&["rev-parse", "--short", "HEAD"])?.trim().to_string();
    let dirty = !git(&["status", "--porcelain"])?.trim().is_empty();
    let toolchain = util::output(Command::new("rustc").current_dir(ws).arg("-V"))?.trim().to_string();
    let entries: Vec<_> = rows
        .iter()
        .map(|row| {
            let budget = budgets.get(&(row.entry.clone(), row.arch.name.to_string()));
            let r = row.report.as_ref();
            json!({
                "variant": row.variant,
                "entry": row.entry,
                "arch": row.arch.name,
                "reported": r.is_some(),
                "registers": r.map(|r| r.registers),
                "static_smem_bytes": r.map(|r| r.shared_bytes),
                "dynamic_smem_bytes": row.dynamic_smem,
                "total_smem_bytes": row.total_smem(),
                "stack_bytes": r.map(|r| r.stack_bytes),
                "spill_store_bytes": r.map(|r| r.spill_store_bytes),
                "spill_load_bytes": r.map(|r| r.spill_load_bytes),
                "barriers": r.map(|r| r.barriers),
                "blocks_per_sm": r.map(|r| blocks_per_sm(row.arch, r.registers, row.threads, row.total_smem().unwrap_or(0))),
                "max_registers": budget.map(|b| b.max_registers),
                "max_smem_bytes": budget.map(|b| b.max_smem_bytes),
                "min_blocks_per_sm": budget.map(|b| b.min_blocks_per_sm),
            })
        })
        .collect();
    let date = crate::benchdata::today();
    let record = json!({
        "kind": "gate-resources",
        "date": date,
        "commit": commit,
        "dirty": dirty,
        "toolchain": toolchain,
        "ptxas": ptxas,
        "entries": entries,
        "violations": violations,
        "verdict": if violations.is_empty() { "pass" } else { "fail" },
    });
    let dir = crate::baselines::dir(ws);
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let path = dir.join(format!("{date}-gate-resources.json"));
    let text = serde_json::to_string_pretty(&record).map_err(|e| e.to_string())? + "\n";
    std::fs::write(&path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(path)
}
