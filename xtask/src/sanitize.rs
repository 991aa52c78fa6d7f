//! `cargo xtask sanitize [--no-bundle] [--out DIR] [--tools a,b]`: runs
//! compute-sanitizer (memcheck, racecheck, synccheck, initcheck) over the
//! bundled `sanitize_target` test executable (every kernel once on the
//! mission, odd-causal and GQA shapes), on a machine with cargo, a GPU and
//! compute-sanitizer. It bundles first, then runs `scripts/sanitize.sh`,
//! which also runs alone on a GPU machine without cargo (over a carried
//! `gpu-bundle/`) and writes one log, `DIR/sanitize.log`.

use std::path::PathBuf;
use std::process::Command;

use crate::util::{self, Args, Result};
use crate::{bundle, gpu};

/// Where compute-sanitizer usually lives when it is not on `PATH`.
const USUAL_PLACES: [&str; 2] = ["/usr/local/cuda/bin/compute-sanitizer", "/opt/cuda/bin/compute-sanitizer"];

/// Runs the command.
pub fn run(args: &[String]) -> Result<()> {
    let mut args = Args::new("sanitize", args);
    let no_bundle = args.flag("--no-bundle");
    let out = args.value("--out")?;
    let tools = args.value("--tools")?;
    args.finish()?;

    let ws = util::workspace();
    let sanitizer = find().ok_or(
        "compute-sanitizer not found (looked at $COMPUTE_SANITIZER, PATH and /usr/local/cuda/bin): it ships with \
         the CUDA toolkit. On a GPU machine without cargo, run `bash scripts/sanitize.sh` over a gpu-bundle/ \
         made here by `cargo xtask bundle`",
    )?;
    let device =
        gpu::detect().map_err(|why| format!("compute-sanitizer needs a GPU, and there is none here ({why})"))?;
    println!("compute-sanitizer: {}\ndevice: {device}", sanitizer.display());
    if !no_bundle {
        bundle::run(&[])?;
    }
    let out = out.map_or_else(|| ws.join("target").join("sanitize"), PathBuf::from);
    let mut cmd = Command::new("bash");
    cmd.current_dir(&ws)
        .arg(ws.join("scripts").join("sanitize.sh"))
        .env("COMPUTE_SANITIZER", &sanitizer)
        .env("OUT", &out)
        .env("BIN", bundle::bin_dir(&ws));
    if let Some(tools) = tools {
        cmd.args(tools.split(',').map(str::trim).filter(|t| !t.is_empty()));
    }
    util::status(&mut cmd).map_err(|e| format!("{e}: see {}", out.join("sanitize.log").display()))
}

/// `$COMPUTE_SANITIZER`, else `compute-sanitizer` on `PATH`, else the usual
/// CUDA toolkit places.
fn find() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("COMPUTE_SANITIZER") {
        return Some(PathBuf::from(p)).filter(|p| p.is_file());
    }
    let on_path = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|paths| std::env::split_paths(&paths).collect::<Vec<_>>())
        .map(|dir| dir.join("compute-sanitizer"));
    on_path.chain(USUAL_PLACES.iter().map(PathBuf::from)).find(|p| p.is_file())
}
