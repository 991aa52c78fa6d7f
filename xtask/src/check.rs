//! The resource checks: each figure against `budgets.toml`, and the rules
//! every entry obeys: no stack, no spills, every `KERNELS` entry built,
//! shared memory within the arch's per-block limit.

use kernel_builder::Arch;
use kernel_builder::report::FunctionReport;

use crate::budgets::{Budgets, smem_limit};
use crate::occupancy::{REGISTERS_PER_SM, block_registers, blocks_per_sm};
use crate::resources::Row;

/// Every violation of the budgets and the global rules, one line each,
/// naming the entry, the arch, the figure and the budget.
pub fn check(rows: &[Row], functions: &[(Arch, FunctionReport)], budgets: &Budgets) -> Vec<String> {
    let mut out = Vec::new();
    for row in rows {
        let at = format!("{} {}", row.entry, row.arch.name);
        let Some(r) = &row.report else {
            out.push(format!("{at}: missing from the ptxas report (it is in kernels_gpu::kernels::KERNELS)"));
            continue;
        };
        if !row.in_table {
            out.push(format!("{at}: entry in the PTX but not in kernels_gpu::kernels::KERNELS"));
        }
        let budget = budgets.get(&(row.entry.clone(), row.arch.name.to_string()));
        let allowed = budget.map_or(0, |b| b.max_spill_bytes);
        spill_rules(&mut out, &at, allowed, r.stack_bytes, r.spill_store_bytes, r.spill_load_bytes);
        let smem = row.total_smem().unwrap_or(0);
        let limit = smem_limit(row.arch);
        if smem > limit {
            out.push(format!("{at}: smem {smem} B > {limit} B, the per-block limit of {}", row.arch.name));
        }
        // A block must fit one multiprocessor's register file, or it cannot launch.
        let allocated = block_registers(r.registers, row.threads);
        if allocated > REGISTERS_PER_SM {
            let (regs, threads) = (r.registers, row.threads);
            out.push(format!(
                "{at}: {threads} threads x {regs} registers (allocated {allocated}) > {REGISTERS_PER_SM}: the block cannot launch"
            ));
        }
        if let Some(why) = l4_two_blocks_violation(row.arch, r.registers, row.threads, smem) {
            out.push(format!("{at}: {why}"));
        }
        let Some(b) = budget else {
            out.push(format!("{at}: no budget in budgets.toml (add one, or run `cargo xtask gate --update-budgets`)"));
            continue;
        };
        if r.registers > b.max_registers {
            out.push(format!("{at}: registers {} > budget {}", r.registers, b.max_registers));
        }
        if smem > b.max_smem_bytes {
            let dynamic = row.dynamic_smem;
            let split = format!("static {} + dynamic {dynamic}", r.shared_bytes);
            out.push(format!("{at}: smem {smem} B ({split}) > budget {} B", b.max_smem_bytes));
        }
        let blocks = blocks_per_sm(row.arch, r.registers, row.threads, smem);
        if blocks < b.min_blocks_per_sm {
            out.push(format!(
                "{at}: {blocks} blocks per SM < budget {} ({} registers x {} threads, {smem} B smem)",
                b.min_blocks_per_sm, r.registers, row.threads
            ));
        }
    }
    for (arch, f) in functions {
        let at = format!("device function {} {}", f.name, arch.name);
        spill_rules(&mut out, &at, 0, f.stack_bytes, f.spill_store_bytes, f.spill_load_bytes);
    }
    for (entry, arch) in budgets.keys() {
        if !rows.iter().any(|r| &r.entry == entry && r.arch.name == arch) {
            out.push(format!("{entry} {arch}: budget in budgets.toml for an entry/arch that is not built (stale)"));
        }
    }
    out
}

/// Shared memory per block that lets two blocks share an L4 multiprocessor.
pub const L4_SMEM_PER_BLOCK: u32 = 48 * 1024;

/// The sm_89 rule (issue 4): every kernel built for Ada must fit two blocks
/// per L4 multiprocessor: at most 48 KiB of shared memory per block, and
/// two blocks' registers (as allocated, see `occupancy`) within the
/// 64K-register file.
pub fn l4_two_blocks_violation(arch: Arch, registers: u32, threads: u32, smem: u32) -> Option<String> {
    if arch.capability != (8, 9) {
        return None;
    }
    if smem > L4_SMEM_PER_BLOCK {
        return Some(format!("smem {smem} B > {L4_SMEM_PER_BLOCK} B: two blocks do not fit an L4 multiprocessor"));
    }
    let two_blocks = 2 * block_registers(registers, threads);
    (two_blocks > REGISTERS_PER_SM).then(|| {
        format!("2 blocks x {threads} threads x {registers} registers = {two_blocks} allocated > {REGISTERS_PER_SM}: two blocks do not fit an L4 multiprocessor")
    })
}

/// The global rule: stack and spills must be 0, or at most `allowed`
/// bytes each where the entry's budget grants an allowance.
fn spill_rules(out: &mut Vec<String>, at: &str, allowed: u32, stack: u32, stores: u32, loads: u32) {
    for (figure, value, rule) in [
        ("stack frame", stack, "no stack allowed"),
        ("spill stores", stores, "no spills allowed"),
        ("spill loads", loads, "no spills allowed"),
    ] {
        if value > allowed {
            let why = if allowed == 0 { rule } else { "the entry's max_spill_bytes in budgets.toml" };
            out.push(format!("{at}: {figure} {value} B > budget {allowed} ({why})"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_l4_rule_applies_to_sm89_only_and_names_the_figure() {
        assert!(l4_two_blocks_violation(SM_89, 157, 128, 36352).is_none());
        assert!(l4_two_blocks_violation(SM_90A, 255, 256, 200_000).is_none());
        assert!(l4_two_blocks_violation(SM_89, 157, 128, 63488).unwrap().contains("63488 B > 49152 B"));
        assert!(l4_two_blocks_violation(SM_89, 255, 256, 1024).unwrap().contains("131072 allocated > 65536"));
    }
    use crate::budgets::{Budget, proposed};
    use kernel_builder::report::EntryReport;
    use kernel_builder::{SM_89, SM_90A};

    fn row(arch: Arch, registers: u32, dynamic_smem: u32, spill: u32) -> Row {
        let report = EntryReport {
            entry: "k".into(),
            arch: arch.name.into(),
            registers,
            shared_bytes: 1024,
            stack_bytes: 0,
            spill_store_bytes: spill,
            spill_load_bytes: 0,
            barriers: 1,
        };
        let entry = "k".into();
        Row { variant: "mma", entry, arch, dynamic_smem, threads: 128, in_table: true, report: Some(report) }
    }

    fn budgets(max_registers: u32, max_smem_bytes: u32) -> Budgets {
        let b = Budget { max_registers, max_smem_bytes, min_blocks_per_sm: 1, max_spill_bytes: 0 };
        [(("k".into(), "sm_90a".into()), b), (("k".into(), "sm_89".into()), b)].into()
    }

    #[test]
    fn proposed_budgets() {
        assert_eq!(
            proposed(147, 34816, 3),
            Budget { max_registers: 155, max_smem_bytes: 35840, min_blocks_per_sm: 3, max_spill_bytes: 0 }
        );
        assert_eq!(
            proposed(250, 0, 1),
            Budget { max_registers: 255, max_smem_bytes: 0, min_blocks_per_sm: 1, max_spill_bytes: 0 }
        );
        assert_eq!(
            proposed(30, 1, 16),
            Budget { max_registers: 38, max_smem_bytes: 1024, min_blocks_per_sm: 16, max_spill_bytes: 0 }
        );
    }

    #[test]
    fn within_budget_passes() {
        let rows = [row(SM_90A, 100, 2048, 0), row(SM_89, 100, 2048, 0)];
        assert_eq!(check(&rows, &[], &budgets(100, 3072)), Vec::<String>::new());
    }

    #[test]
    fn each_violation_names_entry_arch_figure_and_budget() {
        let rows = [row(SM_90A, 101, 2048, 8), row(SM_89, 100, 99 * 1024, 0)];
        let v = check(&rows, &[], &budgets(100, 3072));
        assert_eq!(
            v,
            [
                "k sm_90a: spill stores 8 B > budget 0 (no spills allowed)",
                "k sm_90a: registers 101 > budget 100",
                "k sm_89: smem 102400 B > 101376 B, the per-block limit of sm_89",
                "k sm_89: smem 102400 B > 49152 B: two blocks do not fit an L4 multiprocessor",
                "k sm_89: smem 102400 B (static 1024 + dynamic 101376) > budget 3072 B",
                "k sm_89: 0 blocks per SM < budget 1 (100 registers x 128 threads, 102400 B smem)",
            ]
        );
    }

    #[test]
    fn fewer_blocks_per_sm_than_the_budget_fails() {
        // 128 threads: 168 registers fit 3 blocks on sm_90a, 169 (allocated as 176) only 2.
        let mut b = budgets(200, 64 * 1024);
        b.values_mut().for_each(|b| b.min_blocks_per_sm = 3);
        assert_eq!(check(&[row(SM_90A, 168, 2048, 0)], &[], &b).len(), 1, "only the stale sm_89 budget");
        let v = check(&[row(SM_90A, 169, 2048, 0)], &[], &b);
        assert_eq!(v[0], "k sm_90a: 2 blocks per SM < budget 3 (169 registers x 128 threads, 3072 B smem)");
    }

    #[test]
    fn a_spill_allowance_admits_that_many_bytes_and_no_more() {
        let mut b = budgets(200, 64 * 1024);
        b.values_mut().for_each(|b| b.max_spill_bytes = 8);
        let rows = [row(SM_90A, 128, 2048, 8), row(SM_89, 128, 2048, 12)];
        let v = check(&rows, &[], &b);
        assert_eq!(v, ["k sm_89: spill stores 12 B > budget 8 (the entry's max_spill_bytes in budgets.toml)"]);
    }

    #[test]
    fn missing_entries_and_stale_budgets() {
        let mut missing = row(SM_90A, 1, 0, 0);
        missing.report = None;
        let v = check(&[missing], &[], &budgets(100, 0));
        assert_eq!(v.len(), 2, "{v:?}");
        assert!(v[0].starts_with("k sm_90a: missing from the ptxas report"));
        assert!(v[1].starts_with("k sm_89: budget in budgets.toml") && v[1].ends_with("(stale)"));
    }
}
