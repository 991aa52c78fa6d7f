//! The JSON record of a resource gate run: `results/<YYYY-MM-DD>-gate-resources.json`.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::json;

use crate::budgets::Budgets;
use crate::gate::Row;
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
                "max_registers": budget.map(|b| b.max_registers),
                "max_smem_bytes": budget.map(|b| b.max_smem_bytes),
            })
        })
        .collect();
    let date = today();
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
    let dir = ws.join("results");
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let path = dir.join(format!("{date}-gate-resources.json"));
    let text = serde_json::to_string_pretty(&record).map_err(|e| e.to_string())? + "\n";
    std::fs::write(&path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(path)
}

/// Today's UTC date as `YYYY-MM-DD`.
fn today() -> String {
    let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let (y, m, d) = civil_from_days((secs / 86_400) as i64);
    format!("{y:04}-{m:02}-{d:02}")
}

/// The proleptic Gregorian date `days` after 1970-01-01 (H. Hinnant's algorithm).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

#[cfg(test)]
mod tests {
    use super::civil_from_days;

    #[test]
    fn dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
        assert_eq!(civil_from_days(11_017), (2000, 3, 1));
        assert_eq!(civil_from_days(19_782), (2024, 2, 29));
        assert_eq!(civil_from_days(20_454), (2026, 1, 1));
    }
}
