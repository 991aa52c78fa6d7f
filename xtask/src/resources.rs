//! The resource figures of the build: one row per entry and arch, as
//! ptxas reported them with what the kernel table says of the entry. The
//! gate makes them; the budgets, their checks and the gate's record read them.

use kernel_builder::Arch;
use kernel_builder::report::EntryReport;

/// One entry on one arch: what the table shows and the budgets check.
pub struct Row {
    /// The variant's stable name, `?` for an entry missing from `KERNELS`.
    pub variant: &'static str,
    /// The PTX entry symbol.
    pub entry: String,
    /// The arch it was built for.
    pub arch: Arch,
    /// Dynamic shared memory from `KERNELS` (0 for an entry not in it).
    pub dynamic_smem: u32,
    /// Threads per block from `KERNELS` (0 for an entry not in it).
    pub threads: u32,
    /// Whether the entry is in `KERNELS`.
    pub in_table: bool,
    /// What ptxas reported; `None` if the entry is not in the report.
    pub report: Option<EntryReport>,
}

impl Row {
    /// Static + dynamic shared memory, if ptxas reported the entry.
    pub fn total_smem(&self) -> Option<u32> {
        self.report.as_ref().map(|r| r.shared_bytes + self.dynamic_smem)
    }
}

/// The rows grouped by entry (in first-seen order), archs in build order.
pub fn by_entry(rows: &[Row]) -> Vec<&Row> {
    let mut sorted: Vec<&Row> = rows.iter().collect();
    sorted.sort_by_key(|r| rows.iter().position(|o| o.entry == r.entry));
    sorted
}
