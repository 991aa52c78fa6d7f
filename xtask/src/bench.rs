//! `cargo xtask bench` (time the variants, and the peers, where a GPU is)
//! and `cargo xtask record DIR` (turn the files a GPU run brought back into
//! a record): both write `<out>/<date>-bench.{json,md,svg}`.
//!
//! `bench` must also run from the GPU bundle with no cargo there
//! (`gpu-bundle/bin/xtask bench`): it runs the `sdpa` CLI that sits next to
//! its own executable, and `python3 scripts/peers.py` for the peers.

use std::io::{BufRead, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use kernels_gpu::variant::Variant;
use serde_json::Value;

use crate::baselines;
use crate::benchdata::{self, Gathered, Shape};
use crate::util::{self, Args, Result};

/// The shapes timed when none are given: the record set, as `sdpa
/// bench` takes it.
pub use kernels_gpu::record::SHAPES as DEFAULT_SHAPES;

/// The `nvidia-smi --query-gpu` fields recorded with a bench.
const SMI_FIELDS: &str = "name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,clocks.max.mem,power.draw,power.limit,temperature.gpu,persistence_mode,serial";

/// Where records go by default: the workspace's `baselines/` under cargo,
/// else `./baselines` (the bundle on the GPU machine has no workspace).
fn default_out() -> PathBuf {
    if std::env::var_os("CARGO").is_some() { baselines::dir(&util::workspace()) } else { PathBuf::from(baselines::DIR) }
}

/// What to time: per variant, its shapes. `variants` empty: every variant;
/// `shapes` empty: [`DEFAULT_SHAPES`].
pub fn default_plan(variants: &[String], shapes: &[String]) -> Vec<(String, Vec<String>)> {
    let names: Vec<String> = if variants.is_empty() {
        Variant::ALL.iter().map(|v| v.name().to_string()).collect()
    } else {
        variants.to_vec()
    };
    let list: Vec<String> =
        if shapes.is_empty() { DEFAULT_SHAPES.iter().map(|s| s.to_string()).collect() } else { shapes.to_vec() };
    names.into_iter().map(|v| (v, list.clone())).collect()
}

/// The `sdpa` CLI to run: `$SDPA_BIN`; under cargo, a fresh release build;
/// else the `sdpa` next to this executable, else `gpu-bundle/bin/sdpa`.
pub fn find_sdpa() -> Result<PathBuf> {
    if let Some(p) = std::env::var_os("SDPA_BIN") {
        return Ok(PathBuf::from(p));
    }
    if std::env::var_os("CARGO").is_some() {
        let ws = util::workspace();
        let mut cmd = Command::new(util::cargo());
        cmd.current_dir(&ws).args(["build", "--release", "-p", "sdpa", "--bin", "sdpa"]);
        eprintln!("running {}", util::describe(&cmd));
        util::status(&mut cmd)?;
        let target = std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| ws.join("target"), PathBuf::from);
        return Ok(target.join("release").join("sdpa"));
    }
    let mut candidates = Vec::new();
    if let Some(dir) = std::env::current_exe().ok().and_then(|e| e.parent().map(Path::to_path_buf)) {
        candidates.push(dir.join("sdpa"));
    }
    candidates.push(PathBuf::from("gpu-bundle/bin/sdpa"));
    candidates.iter().find(|p| p.is_file()).cloned().ok_or_else(|| {
        let list: Vec<String> = candidates.iter().map(|p| p.display().to_string()).collect();
        format!("no `sdpa` executable at {} (set SDPA_BIN, or run `cargo xtask bundle`)", list.join(" or "))
    })
}

/// `peers.py`: `./scripts/peers.py`, else `scripts/` beside the bundle
/// (`<exe>/../../scripts`), else the workspace's.
fn find_peers_script() -> Option<PathBuf> {
    let mut candidates = vec![PathBuf::from("scripts/peers.py")];
    if let Some(dir) = std::env::current_exe().ok().and_then(|e| e.parent().map(Path::to_path_buf)) {
        candidates.push(dir.join("../../scripts/peers.py"));
    }
    candidates.push(util::workspace().join("scripts/peers.py"));
    candidates.into_iter().find(|p| p.is_file())
}

/// Runs `sdpa bench` for one variant, its progress (stderr) and table
/// (stdout) streaming to the terminal, writing `json`.
pub fn run_sdpa(sdpa: &Path, variant: &str, shapes: &[String], modes: &str, json: &Path) -> Result<()> {
    let mut cmd = Command::new(sdpa);
    cmd.args(["bench", "--variants", variant, "--modes", modes, "--json"]).arg(json).arg("--shapes").args(shapes);
    eprintln!("running {}", util::describe(&cmd));
    util::status(&mut cmd)
}

/// `nvidia-smi --query-gpu=...`: written to `dir/device.txt` and returned
/// as `{field: value}` for the first GPU; `None` without nvidia-smi.
pub fn smi_clocks(dir: &Path) -> Option<Value> {
    let text = util::output(Command::new("nvidia-smi").arg(format!("--query-gpu={SMI_FIELDS}")).arg("--format=csv"))
        .map_err(|e| eprintln!("no clocks recorded: {}", e.lines().next().unwrap_or("")))
        .ok()?;
    let _ = std::fs::write(dir.join("device.txt"), &text);
    benchdata::parse_smi_csv(&text)
}

/// Runs the peers on `shapes` into `dir/peers.jsonl`, printing each row as
/// it comes; `Err` is the reason they were not run (a note, not a failure).
fn run_peers(shapes: &[String], dir: &Path) -> Result<()> {
    let script = find_peers_script().ok_or("scripts/peers.py not found (run from the repository root)")?;
    let mut cmd = Command::new("python3");
    cmd.arg(&script).args(shapes).stdout(Stdio::piped()).stderr(Stdio::inherit());
    eprintln!("running {}", util::describe(&cmd));
    let mut child = cmd.spawn().map_err(|e| util::spawn_error(&cmd, &e))?;
    let stdout = child.stdout.take().ok_or("no stdout from peers.py")?;
    let path = dir.join("peers.jsonl");
    let mut file = std::fs::File::create(&path).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    for line in BufReader::new(stdout).lines() {
        let line = line.map_err(|e| format!("reading peers.py: {e}"))?;
        writeln!(file, "{line}").map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        match serde_json::from_str::<Value>(&line) {
            Ok(v) if v["skipped"].is_string() => eprintln!("peers skipped: {}", v["skipped"].as_str().unwrap_or("")),
            Ok(v) if v["floor"].is_string() => eprintln!(
                "peers: launch floor {:.2} us, SM clock {} MHz",
                v["median_us"].as_f64().unwrap_or(f64::NAN),
                v["sm_clock_mhz"].as_u64().map_or("?".into(), |c| c.to_string())
            ),
            Ok(v) if v["copy"].is_string() => eprintln!(
                "peers: device-to-device copy {:.2} TB/s read + written",
                v["tb_s"].as_f64().unwrap_or(f64::NAN)
            ),
            Ok(v) if v["median_us"].is_f64() => eprintln!(
                "peer {} {}: {:.2} us{}",
                v["peer"].as_str().unwrap_or("?"),
                Shape::from_peer(&v).map_or_else(|| v["shape"].to_string(), |s| s.label()),
                v["median_us"].as_f64().unwrap_or(f64::NAN),
                v["rel_l2"].as_f64().map_or(String::new(), |e| format!(", rel L2 {e:.1e}"))
            ),
            Ok(v) => eprintln!("peer {}: {}", v["peer"].as_str().unwrap_or("?"), v["error"].as_str().unwrap_or("?")),
            Err(_) => eprintln!("peers.py: {line}"),
        }
    }
    let status = child.wait().map_err(|e| format!("peers.py: {e}"))?;
    if status.success() { Ok(()) } else { Err(format!("peers.py failed ({status}); its rows so far are kept")) }
}

/// Writes the record and says where.
fn write(out: &Path, record: &Value) -> Result<()> {
    for path in baselines::write_record(out, record)? {
        println!("wrote {}", path.display());
    }
    Ok(())
}

/// `cargo xtask bench [--variants a,b] [--shapes "S S .."] [--modes graph,direct] [--peers] [--out DIR] [--date D]`.
pub fn run(args: &[String]) -> Result<()> {
    let mut args = Args::new("bench", args);
    let variants: Vec<String> = args
        .value("--variants")?
        .map(|v| v.split(',').map(str::trim).filter(|s| !s.is_empty()).map(String::from).collect())
        .unwrap_or_default();
    let mut shapes = Vec::new();
    while let Some(list) = args.value("--shapes")? {
        shapes.extend(list.split([' ', ';']).filter(|s| !s.is_empty()).map(String::from));
    }
    let modes = args.value("--modes")?.unwrap_or_else(|| "graph,direct".into());
    let peers = args.flag("--peers");
    let out = args.value("--out")?.map_or_else(default_out, PathBuf::from);
    let date = args.value("--date")?.unwrap_or_else(benchdata::today);
    args.finish()?;
    for v in &variants {
        if Variant::from_name(v).is_none() {
            let known: Vec<&str> = Variant::ALL.iter().map(|v| v.name()).collect();
            return Err(format!("unknown variant `{v}` (known: {})", known.join(", ")));
        }
    }
    for s in &shapes {
        Shape::parse(s)?;
    }
    if !benchdata::is_date(&date) {
        return Err(format!("--date {date}: not YYYY-MM-DD"));
    }

    let plan = default_plan(&variants, &shapes);
    let sdpa = find_sdpa()?;
    let raw = std::env::temp_dir().join(format!("xtask-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&raw);
    std::fs::create_dir_all(&raw).map_err(|e| format!("cannot create {}: {e}", raw.display()))?;
    let clocks = smi_clocks(&raw);
    let mut failures = Vec::new();
    for (i, (variant, list)) in plan.iter().enumerate() {
        eprintln!("== [{}/{}] {variant}: {} shape(s) ==", i + 1, plan.len(), list.len());
        let json = raw.join(format!("bench-{variant}.json"));
        if let Err(e) = run_sdpa(&sdpa, variant, list, &modes, &json) {
            failures.push(e);
            if !json.is_file() {
                return Err(failures.join("\n"));
            }
        }
    }
    let mut peers_note = None;
    if peers {
        let all: Vec<String> = plan.iter().flat_map(|(_, l)| l.iter().cloned()).fold(Vec::new(), |mut acc, s| {
            if !acc.contains(&s) {
                acc.push(s);
            }
            acc
        });
        eprintln!("== peers: {} shape(s) ==", all.len());
        if let Err(reason) = run_peers(&all, &raw) {
            eprintln!("peers: {reason}");
            peers_note = Some(format!("peers not run: {reason}"));
        }
    }
    let mut g = Gathered::from_dir(&raw)?;
    if g.clocks.is_none() {
        g.clocks = clocks;
    }
    if peers_note.is_some() {
        g.peers_note = peers_note;
    } else if !peers && g.peers_note.is_none() {
        g.peers_note = Some("not timed (run without --peers)".into());
    }
    write(&out, &g.into_record(&date))?;
    let _ = std::fs::remove_dir_all(&raw);
    if failures.is_empty() { Ok(()) } else { Err(format!("recorded, but: {}", failures.join("\n"))) }
}

/// The date of a directory of results: `--date`, else the `YYYY-MM-DD`
/// its name starts with, else today.
pub fn date_for(dir: &Path, given: Option<String>) -> Result<String> {
    if let Some(d) = given {
        return if benchdata::is_date(&d) { Ok(d) } else { Err(format!("--date {d}: not YYYY-MM-DD")) };
    }
    let name = dir.canonicalize().ok().and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()));
    Ok(name
        .and_then(|n| n.get(..10).filter(|p| benchdata::is_date(p)).map(str::to_string))
        .unwrap_or_else(benchdata::today))
}

/// `cargo xtask record DIR [--out DIR] [--date YYYY-MM-DD]`.
pub fn record(args: &[String]) -> Result<()> {
    let Some(dir) = args.first().filter(|a| !a.starts_with("--")) else {
        return Err("usage: cargo xtask record DIR [--out DIR] [--date YYYY-MM-DD]".into());
    };
    let dir = PathBuf::from(dir);
    let mut args = Args::new("record", &args[1..]);
    let out = args.value("--out")?.map_or_else(default_out, PathBuf::from);
    let date = date_for(&dir, args.value("--date")?)?;
    args.finish()?;
    let g = Gathered::from_dir(&dir)?;
    println!("read {} from {}", g.sources.join(", "), dir.display());
    write(&out, &g.into_record(&date))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_plan_times_every_variant_on_the_default_shapes() {
        let plan = default_plan(&[], &[]);
        assert_eq!(plan.len(), Variant::ALL.len());
        assert!(plan.iter().all(|(_, shapes)| shapes == &DEFAULT_SHAPES));
        let given = default_plan(&["mma".into()], &["1,1,64,64".into()]);
        assert_eq!(given, [("mma".to_string(), vec!["1,1,64,64".to_string()])]);
        for s in DEFAULT_SHAPES {
            assert_eq!(Shape::parse(s).unwrap().label(), s);
        }
    }

    #[test]
    fn record_dates_come_from_the_flag_or_the_directory_name() {
        let dir = std::env::temp_dir().join(format!("2026-11-22-xtask-date-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        assert_eq!(date_for(&dir, None).unwrap(), "2026-11-22");
        assert_eq!(date_for(&dir, Some("2027-01-02".into())).unwrap(), "2027-01-02");
        assert!(date_for(&dir, Some("soon".into())).is_err());
        assert_eq!(date_for(Path::new("/"), None).unwrap(), benchdata::today());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn recording_the_first_h200_run() {
        let dir = util::workspace().join("xtask/testdata/2026-11-22-h200-run1");
        let g = Gathered::from_dir(&dir).unwrap();
        assert_eq!(g.sources, ["bench-mma.json", "bench-naive.json", "fuzz.log", "gate.log"]);
        let record = g.into_record("2026-11-22");
        let rows = benchdata::variant_rows(&record);
        assert_eq!(rows.len(), 22);
        assert_eq!(record["logs"]["gate.log"], "126 passed, 0 failed");
        let md = crate::report::markdown(&record);
        assert!(md.contains("| 2,8,256,64 | 7.18 | 37.4 | 163.1 | 1.6 |"), "{md}");
    }
}
