//! `cargo xtask gate [--update-budgets] [--no-gpu] [--record] [--bench FILE] [--baseline FILE] [--update]`:
//! the resource gate (ptxas figures of every entry on every arch against
//! `budgets.toml`, and the packed twins' step loops against their dense
//! kernels' in SASS: `sass::twin_step_violations`), then, where a GPU is present, the GPU correctness suite,
//! then the speed gate (`speed.rs`) on a fresh bench.

use kernel_builder::report::{self, EntryReport};
use kernel_builder::{ARCHS, Arch};
use kernels_gpu::kernels::KERNELS;

use crate::occupancy::blocks_per_sm;
use crate::resources::{Row, by_entry};
use crate::util::{self, Args, Result};
use crate::{budgets, check, gpu, ptx, record, sass, setup, speed};

/// Runs the command.
pub fn run(args: &[String]) -> Result<()> {
    let mut args = Args::new("gate", args);
    let update = args.flag("--update-budgets");
    let no_gpu = args.flag("--no-gpu");
    let record = args.flag("--record");
    let bench = args.value("--bench")?.map(std::path::PathBuf::from);
    let baseline = args.value("--baseline")?.map(std::path::PathBuf::from);
    let update_speed = args.flag("--update");
    args.finish()?;

    let ws = util::workspace();
    let budgets_path = ws.join("budgets.toml");
    // Read the budgets first, so that a broken file fails before the build.
    // (With --update-budgets a missing or broken file is rewritten, keeping
    // what spill allowances it had if it reads.)
    let loaded = if update { None } else { Some(budgets::load(&budgets_path)?) };
    let kept = if update { budgets::load(&budgets_path).unwrap_or_default() } else { Default::default() };
    let ptxas = setup::ensure_ptxas(&ws)?;
    let mut rows = Vec::new();
    let mut functions = Vec::new();
    let mut advisories = Vec::new();
    let mut twin_steps = Vec::new();
    for arch in ARCHS {
        let built = ptx::build(&ws, &ptxas, arch)?;
        // The packed twins' step loops against their dense kernels' (SASS:
        // `nvdisasm`), where the twins are built.
        if arch.name == "sm_90a" {
            let listing = sass::disassemble(&ws, &built.cubin)?;
            twin_steps = sass::twin_step_violations(&listing, &sass::twin_pairs());
        }
        let parsed = report::parse_report(&built.report).map_err(|e| format!("ptxas report for {}: {e}", arch.name))?;
        rows.extend(rows_for(arch, parsed.entries));
        functions.extend(parsed.functions.into_iter().map(|f| (arch, f)));
        advisories.extend(parsed.advisories.into_iter().map(|a| (arch, a)));
    }
    let budgets = match loaded {
        Some(b) => b,
        None => {
            budgets::write(&budgets_path, &rows, &kept)?;
            eprintln!("wrote {}", budgets_path.display());
            budgets::load(&budgets_path)?
        }
    };
    let mut violations = check::check(&rows, &functions, &budgets);
    // A "Potential Performance Loss" from ptxas (e.g. C7513: every `wgmma`
    // of a loop serialized) is a regression the register figures do not show.
    violations.extend(advisories.iter().map(|(arch, a)| {
        let at = a.function.as_deref().unwrap_or("(no function named)");
        format!("{at} {}: ptxas {}: {}", arch.name, a.code, a.text)
    }));
    violations.extend(twin_steps);
    print_table(&rows, &budgets);
    if record {
        let path = record::write(&ws, &rows, &budgets, &violations, &setup::version(&ptxas))?;
        println!("recorded {}", path.display());
    }
    if !violations.is_empty() {
        for v in &violations {
            println!("FAIL {v}");
        }
        return Err(format!("resource gate failed: {} violation(s)", violations.len()));
    }
    println!("resource gate passed ({} entries x {} archs)", KERNELS.len(), ARCHS.len());

    let gpu = if no_gpu { Err("--no-gpu given".to_string()) } else { gpu::detect() };
    match &gpu {
        Err(reason) => println!("GPU gates skipped: {reason}"),
        Ok(name) => {
            println!("GPU: {name}");
            gpu::run_suite(&ws)?;
        }
    }
    speed::gate_step(&ws, bench.as_deref(), baseline.as_deref(), update_speed, &gpu)
}

/// The rows of one arch: every `KERNELS` entry built for it (reported or
/// not; sm_90a-only entries are not built for other archs; a prepass that
/// two kernels share, once; a merge kernel and the twins after their
/// kernel), the quantizer's entries
/// (`kernels_gpu::quantize::QUANTIZE_KERNELS`), then the reported entries
/// neither table has.
fn rows_for(arch: Arch, mut entries: Vec<EntryReport>) -> Vec<Row> {
    let built = KERNELS.iter().filter(|k| !k.sm90a_only || arch.name == "sm_90a");
    let mut tabled: Vec<_> = built
        .flat_map(|k| {
            let main = (k.variant.name(), k.entry, k.smem_bytes, k.threads());
            let prepass = k.prepass.map(|p| (k.variant.name(), p.entry, p.smem_bytes, p.threads));
            let merge = k.merge.map(|m| (k.variant.name(), m.entry(k.output), m.smem_bytes, m.threads));
            let twins = k.twins().map(|(entry, _)| (k.variant.name(), entry, k.smem_bytes, k.threads()));
            std::iter::once(main).chain(prepass).chain(merge).chain(twins)
        })
        .collect();
    // The quantizer's entries (plain PTX, both archs): no dynamic smem.
    let quantizer = kernels_gpu::quantize::QUANTIZE_KERNELS.iter();
    tabled.extend(quantizer.map(|k| ("quantize", k.entry, 0, kernels_gpu::quantize::THREADS)));
    let mut seen = std::collections::HashSet::new();
    tabled.retain(|&(_, entry, _, _)| seen.insert(entry));
    let mut rows: Vec<Row> = tabled
        .into_iter()
        .map(|(variant, entry, dynamic_smem, threads)| {
            let report = entries.iter().position(|e| e.entry == entry).map(|i| entries.remove(i));
            Row { variant, entry: entry.to_string(), arch, dynamic_smem, threads, in_table: true, report }
        })
        .collect();
    rows.extend(entries.into_iter().map(|e| Row {
        variant: "?",
        entry: e.entry.clone(),
        arch,
        dynamic_smem: 0,
        threads: 0,
        in_table: false,
        report: Some(e),
    }));
    rows
}

/// Prints the figures, entry by entry, with each budget beside its figure.
fn print_table(rows: &[Row], budgets: &budgets::Budgets) {
    let header = [
        "variant",
        "entry",
        "arch",
        "regs",
        "max",
        "smem static",
        "dynamic",
        "total",
        "max",
        "stack",
        "spill st",
        "spill ld",
        "blk/SM",
        "min",
    ];
    let mut lines = vec![header.map(String::from).to_vec()];
    for row in by_entry(rows) {
        let budget = budgets.get(&(row.entry.clone(), row.arch.name.to_string()));
        let max = |f: fn(&budgets::Budget) -> u32| budget.map_or("-".into(), |b| f(b).to_string());
        let mut line = vec![row.variant.to_string(), row.entry.clone(), row.arch.name.to_string()];
        match &row.report {
            Some(r) => line.extend([
                r.registers.to_string(),
                max(|b| b.max_registers),
                r.shared_bytes.to_string(),
                row.dynamic_smem.to_string(),
                (r.shared_bytes + row.dynamic_smem).to_string(),
                max(|b| b.max_smem_bytes),
                r.stack_bytes.to_string(),
                r.spill_store_bytes.to_string(),
                r.spill_load_bytes.to_string(),
                blocks_per_sm(row.arch, r.registers, row.threads, r.shared_bytes + row.dynamic_smem).to_string(),
                max(|b| b.min_blocks_per_sm),
            ]),
            None => line.extend(std::iter::repeat_n("-".to_string(), header.len() - 3)),
        }
        lines.push(line);
    }
    let widths: Vec<usize> =
        (0..header.len()).map(|c| lines.iter().filter_map(|l| l.get(c)).map(String::len).max().unwrap_or(0)).collect();
    for line in lines {
        let cells: Vec<String> = line
            .iter()
            .enumerate()
            .map(|(c, s)| if c < 3 { format!("{s:<w$}", w = widths[c]) } else { format!("{s:>w$}", w = widths[c]) })
            .collect();
        println!("{}", cells.join("  ").trim_end());
    }
}
