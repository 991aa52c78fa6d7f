//! The speed gate (a step of `cargo xtask gate`): each (variant, shape) of a
//! fresh bench, CUDA-graph mode, against the newest committed bench record
//! in `baselines/` (`<date>[-n]-bench.json`) measured on the same GPU, or
//! against a given baseline bench (`--baseline`: the previous build timed in
//! the same run, e.g. by `scripts/ab-bench.sh`, so that two machines of one
//! kind cannot pass for a change of speed).
//!
//! Rule: a row fails when its median is slower than the baseline's median
//! by more than `max(3 * spread, 5%)`, where `spread = (p90 - p10) / median`
//! of the baseline row, or when its p10 is slower than the baseline's p10
//! by more than 5% (docs/testing.md, "Speed gate"). Rows without a baseline row
//! are reported, not failed; a fresh row whose correctness check failed
//! fails the gate.

use std::path::{Path, PathBuf};

use kernels_gpu::variant::Variant;
use serde_json::Value;

use crate::benchdata::{self, Gathered, Row, Shape, variant_rows};
use crate::util::Result;
use crate::{baselines, bench};

/// The smallest slowdown the gate ever allows, as a fraction.
pub const MIN_ALLOWED: f64 = 0.05;
/// How many baseline spreads a slowdown may reach.
pub const SPREAD_FACTOR: f64 = 3.0;

/// The slowdown (a fraction of the baseline median) a row's median may
/// show: `max(3 * (p90 - p10) / median, 5%)` of the baseline row. Its p10
/// may be at most [`MIN_ALLOWED`] slower than the baseline's p10 (see
/// [`compare`]).
pub fn allowed_slowdown(baseline: &Row) -> f64 {
    let spread = baseline.spread();
    if spread.is_finite() { (SPREAD_FACTOR * spread).max(MIN_ALLOWED) } else { MIN_ALLOWED }
}

/// Whether a slowdown `change` stays within `allowed` (a hair of slack,
/// so that exactly the allowance passes despite rounding).
fn within(change: f64, allowed: f64) -> bool {
    change <= allowed + 1e-9
}

/// One (variant, shape) compared.
#[derive(Debug, PartialEq)]
pub struct Check {
    /// Variant name.
    pub variant: String,
    /// The shape.
    pub shape: Shape,
    /// Baseline median (us).
    pub baseline_us: f64,
    /// Fresh median (us).
    pub fresh_us: f64,
    /// `fresh / baseline - 1` (positive: slower).
    pub change: f64,
    /// The slowdown allowed.
    pub allowed: f64,
    /// `fresh p10 / baseline p10 - 1` (allowed up to [`MIN_ALLOWED`]).
    pub p10_change: f64,
    /// Whether it passes (not slower than allowed, and correct).
    pub pass: bool,
    /// Whether the fresh row's correctness check passed.
    pub correct: bool,
}

/// Compares the graph-mode rows of `fresh` with those of `baseline`;
/// returns the checks and the fresh rows no baseline row matches.
///
/// The p10 test gives the gate teeth where the median's allowance is wide:
/// the long D = 128 rows meet the GPU's power cap while they are timed, so
/// their samples fall in two modes ~8% apart and the baseline's spread
/// allows 17-29%, while their p10, the uncapped kernel, stayed within 1.6%
/// over five records on H100s and H200s (docs/testing.md, "Speed gate").
/// Over every pair of consecutive same-GPU records until then (1957 rows)
/// no p10 was 5% slower where the median passed.
pub fn compare(baseline: &[Row], fresh: &[Row]) -> (Vec<Check>, Vec<Row>) {
    let mut checks = Vec::new();
    let mut unmatched = Vec::new();
    for f in fresh.iter().filter(|r| r.mode == "graph") {
        let Some(b) = baseline.iter().find(|b| b.mode == "graph" && b.name == f.name && b.shape == f.shape) else {
            unmatched.push(f.clone());
            continue;
        };
        let change = f.median_us / b.median_us - 1.0;
        let allowed = allowed_slowdown(b);
        let p10_change = f.p10_us / b.p10_us - 1.0;
        let correct = f.correct != Some(false);
        checks.push(Check {
            variant: f.name.clone(),
            shape: f.shape,
            baseline_us: b.median_us,
            fresh_us: f.median_us,
            change,
            allowed,
            p10_change,
            pass: correct && within(change, allowed) && within(p10_change, MIN_ALLOWED),
            correct,
        });
    }
    (checks, unmatched)
}

/// Whether every row of `fresh` is, to the bit, a row of `recorded`: the
/// record of the fresh run itself (or of a run it was taken from).
fn same_run(recorded: &Value, fresh: &Value) -> bool {
    let (Some(recorded), Some(fresh)) = (recorded.as_array(), fresh.as_array()) else {
        return false;
    };
    !fresh.is_empty() && fresh.iter().all(|r| recorded.contains(r))
}

/// A bench as a record: an `sdpa bench --json` file, a record, or a
/// folder of GPU-run logs (`cargo xtask record`'s input).
fn load_bench(path: &Path) -> Result<Value> {
    if path.is_dir() {
        return Ok(Gathered::from_dir(path)?.into_record(&bench::date_for(path, None)?));
    }
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let doc: Value = serde_json::from_str(&text).map_err(|e| format!("{} is not JSON: {e}", path.display()))?;
    let mut g = Gathered::default();
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    g.add_bench(&name, &doc)?;
    Ok(g.into_record(&doc["date"].as_str().map_or_else(benchdata::today, str::to_string)))
}

/// The newest record in `folder` (by date, then run number of the day)
/// measured on `device`, other than the record of the fresh run itself
/// (one that holds every row of `fresh_rows`).
pub fn find_baseline(folder: &Path, device: &str, fresh_rows: &Value) -> Result<Option<(PathBuf, Value)>> {
    for path in baselines::list(folder).into_iter().rev() {
        let text = std::fs::read_to_string(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let doc: Value = serde_json::from_str(&text).map_err(|e| format!("{} is not JSON: {e}", path.display()))?;
        if benchdata::device_name(&doc) == Some(device) && !same_run(&doc["rows"], fresh_rows) {
            return Ok(Some((path, doc)));
        }
    }
    Ok(None)
}

/// Prints the checks as a table.
fn print_checks(checks: &[Check]) {
    println!(
        "{:<8} {:<22} {:>12} {:>12} {:>8} {:>8} {:>8}  verdict",
        "variant", "shape", "baseline us", "fresh us", "change", "allowed", "p10 chg"
    );
    for c in checks {
        let verdict = match (c.pass, c.correct) {
            (true, _) => "ok",
            (false, false) => "FAIL (incorrect)",
            (false, true) if !within(c.change, c.allowed) => "FAIL (slower)",
            (false, true) => "FAIL (p10 slower)",
        };
        println!(
            "{:<8} {:<22} {:>12.2} {:>12.2} {:>+7.1}% {:>7.1}% {:>+7.1}%  {verdict}",
            c.variant,
            c.shape.label(),
            c.baseline_us,
            c.fresh_us,
            100.0 * c.change,
            100.0 * c.allowed,
            100.0 * c.p10_change
        );
    }
}

/// The speed step of the gate. `bench`: a fresh bench (an `sdpa bench
/// --json` file, a record, or a directory of them as `record` reads it); without one, `gpu` says whether a fresh bench
/// can be run here. `update`: make the fresh bench the new baseline.
pub fn gate_step(
    ws: &Path,
    bench_file: Option<&Path>,
    baseline_file: Option<&Path>,
    update: bool,
    gpu: &Result<String>,
) -> Result<()> {
    let folder = baselines::dir(ws);
    let fresh = match (bench_file, gpu) {
        (Some(path), _) => load_bench(path)?,
        (None, Err(reason)) => {
            println!("speed gate skipped: no GPU ({reason}) and no --bench FILE");
            return Ok(());
        }
        (None, Ok(_)) => fresh_bench(ws, &folder)?,
    };
    let device = benchdata::device_name(&fresh).ok_or("the fresh bench names no device")?.to_string();
    let fresh_rows = variant_rows(&fresh);
    if fresh_rows.is_empty() {
        return Err("speed gate: the fresh bench has no rows".into());
    }
    let baseline = match baseline_file {
        Some(path) => {
            let doc = load_bench(path)?;
            let theirs = benchdata::device_name(&doc).ok_or("the baseline bench names no device")?;
            if theirs != device {
                return Err(format!("the baseline ran on {theirs}, the fresh bench on {device}"));
            }
            Some((path.to_path_buf(), doc))
        }
        None => find_baseline(&folder, &device, &fresh["rows"])?,
    };
    let mut failed = Vec::new();
    match &baseline {
        None => println!("speed gate: no baseline for {device} in {} (`--update` records one)", folder.display()),
        Some((path, doc)) => {
            println!("speed gate: {device}, baseline {}", path.display());
            let (checks, unmatched) = compare(&variant_rows(doc), &fresh_rows);
            print_checks(&checks);
            for r in &unmatched {
                println!("{:<8} {:<22} no baseline row (new)", r.name, r.shape.label());
            }
            failed.extend(checks.iter().filter(|c| !c.pass).map(|c| format!("{} {}", c.variant, c.shape.label())));
        }
    }
    let incorrect: Vec<String> = fresh_rows
        .iter()
        .filter(|r| r.correct == Some(false))
        .map(|r| format!("{} {} {}", r.name, r.shape.label(), r.mode))
        .collect();
    if update {
        if !incorrect.is_empty() {
            return Err(format!("not recording a baseline with incorrect rows: {}", incorrect.join(", ")));
        }
        for path in baselines::write_record(&folder, &fresh)? {
            println!("recorded {}", path.display());
        }
        println!("speed gate: new baseline recorded (commit it)");
        return Ok(());
    }
    if !incorrect.is_empty() {
        return Err(format!("speed gate failed: incorrect rows: {}", incorrect.join(", ")));
    }
    if failed.is_empty() {
        println!("speed gate passed");
        Ok(())
    } else {
        let machines = baseline.as_ref().map_or(String::new(), |(_, doc)| format!(" ({})", machine_note(doc, &fresh)));
        Err(format!("speed gate failed: slower than the baseline allows: {}{machines}", failed.join(", ")))
    }
}

/// What the records say of the machines behind a failed comparison: the
/// GPU serials (`nvidia-smi`'s `serial`, in a record's `clocks`) of the
/// baseline and the fresh bench. Records of one GPU model from different
/// machines have differed by more than the 5% floor with the same kernels
/// (docs/testing.md, "Speed gate"), so a failure across machines says less than one
/// on the same machine.
fn machine_note(baseline: &Value, fresh: &Value) -> String {
    let serial = |doc: &Value| doc["clocks"]["serial"].as_str().map(str::to_string);
    match (serial(baseline), serial(fresh)) {
        (Some(a), Some(b)) if a == b => format!("the same machine (GPU serial {a})"),
        (Some(a), Some(b)) => format!(
            "different machines (GPU serials {a} and {b}): machine spread can exceed the 5% floor; \
             compare builds in one run with --baseline"
        ),
        _ => "a record without a GPU serial: whether both ran on one machine is unknown".to_string(),
    }
}

/// Runs `sdpa bench` (graph mode) on the baseline's (variant, shape) pairs,
/// or on the default ones when there is no baseline, and returns the record.
fn fresh_bench(ws: &Path, folder: &Path) -> Result<Value> {
    let sdpa = bench::find_sdpa()?;
    // The device is not known before the run: take the newest record of any device for the pairs.
    let newest = baselines::list(folder).pop();
    let plan: Vec<(String, Vec<String>)> = match newest {
        Some(path) => {
            let text = std::fs::read_to_string(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            let doc: Value = serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
            let rows = variant_rows(&doc);
            let mut plan: Vec<(String, Vec<String>)> = Vec::new();
            // Rows of variants this build no longer has (retired since the
            // record) are not benched again.
            let built = |name: &str| Variant::from_name(name).is_some();
            for r in rows.iter().filter(|r| r.mode == "graph" && built(&r.name)) {
                match plan.iter_mut().find(|(v, _)| *v == r.name) {
                    Some((_, shapes)) => shapes.push(r.shape.label()),
                    None => plan.push((r.name.clone(), vec![r.shape.label()])),
                }
            }
            plan
        }
        None => bench::default_plan(&[], &[]),
    };
    let dir = ws.join("target").join("speed-gate");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    for (variant, shapes) in &plan {
        bench::run_sdpa(&sdpa, variant, shapes, "graph", &dir.join(format!("bench-{variant}.json")))?;
    }
    let mut g = Gathered::from_dir(&dir)?;
    g.clocks = bench::smi_clocks(&dir);
    Ok(g.into_record(&benchdata::today()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::benchdata::tests::{sdpa_doc, sdpa_row};

    fn rows(list: &[(&str, &str, &str, f64, f64, f64)]) -> Vec<Row> {
        variant_rows(&sdpa_doc(list.iter().map(|r| sdpa_row(r.0, r.1, r.2, r.3, r.4, r.5)).collect()))
    }

    #[test]
    fn the_allowance_is_three_spreads_but_at_least_five_percent() {
        // Tight baseline (0.5% spread): 5% floor.
        let tight = &rows(&[("mma", "2,8,256,64", "graph", 100.0, 99.8, 100.3)])[0];
        assert!((allowed_slowdown(tight) - 0.05).abs() < 1e-12);
        // Noisy baseline (4% spread): 12%.
        let noisy = &rows(&[("mma", "2,8,256,64", "graph", 100.0, 98.0, 102.0)])[0];
        assert!((allowed_slowdown(noisy) - 0.12).abs() < 1e-12);
    }

    #[test]
    fn a_p10_slower_by_more_than_five_percent_fails_where_the_median_passes() {
        // Record -14's `wgmma` (1,16,16384,128): two modes (the power
        // cap), so the median may move 17%.
        let base = rows(&[("wgmma", "1,16,16384,128", "graph", 2712.4, 2566.0, 2720.9)]);
        let allowed = allowed_slowdown(&base[0]);
        assert!(allowed > 0.17 && allowed < 0.18);
        let verdict = |median, p10, p90| {
            compare(&base, &rows(&[("wgmma", "1,16,16384,128", "graph", median, p10, p90)])).0[0].pass
        };
        // The slow mode's median with the same fast mode: passes.
        assert!(verdict(2811.2, 2588.4, 2816.3));
        // A kernel 10% slower in both modes: the median's +4.5% is allowed,
        // the p10's +10% is not.
        assert!(!verdict(2834.5, 2822.6, 3095.0));
        // Exactly 5% on the p10: passes.
        assert!(verdict(2712.4, 2566.0 * 1.05, 2720.9));
    }

    #[test]
    fn slower_beyond_the_allowance_fails_within_passes() {
        let base = rows(&[
            ("mma", "2,8,256,64", "graph", 100.0, 99.8, 100.3),
            ("mma", "2,8,256,64", "direct", 100.0, 99.8, 100.3),
            ("mma", "1,8,512,64", "graph", 100.0, 98.0, 102.0),
            ("split", "2,8,256,64", "graph", 100.0, 99.0, 101.0),
        ]);
        let fresh = rows(&[
            ("mma", "2,8,256,64", "graph", 105.0, 104.0, 106.0), // +5.0%: allowed 5%
            ("mma", "2,8,256,64", "direct", 500.0, 499.0, 501.0), // direct mode: not gated
            ("mma", "1,8,512,64", "graph", 112.5, 112.0, 113.0), // +12.5% > 12%
            ("split", "2,8,256,64", "graph", 80.0, 79.0, 81.0),  // faster
            ("mma", "4,16,2048,64", "graph", 1.0, 1.0, 1.0),     // new
        ]);
        let (checks, unmatched) = compare(&base, &fresh);
        let verdicts: Vec<(&str, String, bool)> =
            checks.iter().map(|c| (c.variant.as_str(), c.shape.label(), c.pass)).collect();
        assert_eq!(
            verdicts,
            [
                ("mma", "2,8,256,64".to_string(), true),
                ("mma", "1,8,512,64".to_string(), false),
                ("split", "2,8,256,64".to_string(), true),
            ]
        );
        assert_eq!(unmatched.len(), 1);
        assert_eq!(unmatched[0].shape.label(), "4,16,2048,64");
    }

    #[test]
    fn a_failure_names_whether_the_records_share_a_machine() {
        let doc = |serial: Option<&str>| {
            let mut d = sdpa_doc(vec![]);
            if let Some(s) = serial {
                d["clocks"] = serde_json::json!({ "serial": s });
            }
            d
        };
        assert!(machine_note(&doc(Some("1")), &doc(Some("1"))).starts_with("the same machine"));
        assert!(machine_note(&doc(Some("1")), &doc(Some("2"))).starts_with("different machines"));
        assert!(machine_note(&doc(None), &doc(Some("2"))).contains("unknown"));
    }

    #[test]
    fn an_incorrect_row_fails_even_when_fast() {
        let base = rows(&[("mma", "2,8,256,64", "graph", 100.0, 99.8, 100.3)]);
        let mut fresh = rows(&[("mma", "2,8,256,64", "graph", 50.0, 49.0, 51.0)]);
        fresh[0].correct = Some(false);
        let (checks, _) = compare(&base, &fresh);
        assert!(!checks[0].pass && !checks[0].correct);
    }

    #[test]
    fn the_baseline_is_the_newest_record_of_the_same_device() {
        let dir = std::env::temp_dir().join(format!("xtask-speed-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("2026-12-01-run")).unwrap();
        let doc = |median: f64| sdpa_doc(vec![sdpa_row("mma", "2,8,256,64", "graph", median, 1.0, 1.0)]);
        let mut h100 = doc(5.0);
        h100["device"]["name"] = "NVIDIA H100".into();
        std::fs::write(dir.join("2026-11-22-bench.json"), doc(1.0).to_string()).unwrap();
        std::fs::write(dir.join("2026-11-23-bench.json"), doc(2.0).to_string()).unwrap();
        std::fs::write(dir.join("2026-11-23-2-bench.json"), doc(3.0).to_string()).unwrap();
        std::fs::write(dir.join("2026-11-23-10-bench.json"), doc(4.0).to_string()).unwrap();
        std::fs::write(dir.join("2026-11-24-bench.json"), h100.to_string()).unwrap();
        std::fs::write(dir.join("2026-11-25-bench.md"), "not json").unwrap();
        std::fs::write(dir.join("2026-12-01-run").join("x-bench.json"), "not json").unwrap();
        let name = |found: Option<(PathBuf, Value)>| found.map(|(p, _)| p.file_name().unwrap().to_owned());
        // Record 10 of the 23rd is newer than record 2 (numbers, not text, order the runs of a day).
        let fresh = doc(9.0)["rows"].clone();
        assert_eq!(name(find_baseline(&dir, "NVIDIA H200", &fresh).unwrap()).unwrap(), "2026-11-23-10-bench.json");
        assert_eq!(name(find_baseline(&dir, "NVIDIA H100", &fresh).unwrap()).unwrap(), "2026-11-24-bench.json");
        // The fresh run's own record is not its baseline.
        let itself = doc(4.0)["rows"].clone();
        assert_eq!(name(find_baseline(&dir, "NVIDIA H200", &itself).unwrap()).unwrap(), "2026-11-23-2-bench.json");
        let part = serde_json::json!([itself[0].clone()]);
        assert_eq!(name(find_baseline(&dir, "NVIDIA H200", &part).unwrap()).unwrap(), "2026-11-23-2-bench.json");
        assert!(find_baseline(&dir, "NVIDIA L4", &fresh).unwrap().is_none());
        assert!(find_baseline(&dir.join("missing"), "NVIDIA H200", &fresh).unwrap().is_none());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_given_baseline_replaces_the_records_and_must_share_the_device() {
        let dir = std::env::temp_dir().join(format!("xtask-speed-baseline-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join(baselines::DIR)).unwrap();
        let doc = |median: f64| sdpa_doc(vec![sdpa_row("split", "2,8,256,64", "graph", median, median, median)]);
        // A committed record that the fresh bench would pass against...
        std::fs::write(dir.join(baselines::DIR).join("2026-11-25-bench.json"), doc(10.0).to_string()).unwrap();
        let (old, new) = (dir.join("ab-old-1.json"), dir.join("ab-new-1.json"));
        std::fs::write(&new, doc(5.5).to_string()).unwrap();
        let no_gpu: Result<String> = Err("none".into());
        assert!(gate_step(&dir, Some(&new), None, false, &no_gpu).is_ok());
        // ... fails against the same run's previous build, 10% faster.
        std::fs::write(&old, doc(5.0).to_string()).unwrap();
        let err = gate_step(&dir, Some(&new), Some(&old), false, &no_gpu).unwrap_err();
        assert!(err.contains("split 2,8,256,64"), "{err}");
        // A baseline from another GPU is refused.
        let mut h100 = doc(5.0);
        h100["device"]["name"] = "NVIDIA H100".into();
        std::fs::write(&old, h100.to_string()).unwrap();
        let err = gate_step(&dir, Some(&new), Some(&old), false, &no_gpu).unwrap_err();
        assert!(err.contains("the baseline ran on NVIDIA H100"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
