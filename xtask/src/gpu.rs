//! The GPU half of the gate: finding a GPU and running the bundled GPU
//! correctness suite on it.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::bundle;
use crate::util::{self, Result};

/// The GPU to run on (its `nvidia-smi -L` line), or why there is none.
/// `SDPA_GPU=1` forces "present" and `SDPA_GPU=0` "absent".
pub fn detect() -> Result<String> {
    match std::env::var("SDPA_GPU").as_deref() {
        Ok("1") => return Ok("assumed present (SDPA_GPU=1)".into()),
        Ok("0") => return Err("SDPA_GPU=0".into()),
        _ => {}
    }
    let out =
        util::output(Command::new("nvidia-smi").arg("-L")).map_err(|e| e.lines().next().unwrap_or("").to_string())?;
    out.lines()
        .map(str::trim)
        .find(|l| l.starts_with("GPU "))
        .map(str::to_string)
        .ok_or_else(|| "`nvidia-smi -L` lists no GPU".into())
}

/// Runs every GPU test binary with `--ignored --test-threads=1 --nocapture`
/// (the GPU tests are `#[ignore]`d so that machines without a GPU never
/// count them as passed), from `tests/` as cargo would; fails if any fails.
pub fn run_suite(ws: &Path) -> Result<()> {
    let binaries = test_binaries(ws)?;
    let dir = if ws.join("tests").is_dir() { ws.join("tests") } else { ws.to_path_buf() };
    let mut failed = Vec::new();
    for bin in &binaries {
        println!("running {} --ignored --test-threads=1 --nocapture", bin.display());
        let mut cmd = Command::new(bin);
        cmd.args(["--ignored", "--test-threads=1", "--nocapture"]).current_dir(&dir);
        if let Err(e) = util::status(&mut cmd) {
            println!("FAIL {e}");
            failed.push(bin.display().to_string());
        }
    }
    if failed.is_empty() {
        println!("GPU gates passed ({} test binaries)", binaries.len());
        Ok(())
    } else {
        Err(format!("GPU correctness suite failed: {}", failed.join(", ")))
    }
}

/// `$SDPA_GPU_TESTS` (one path, or several joined like `PATH`), else the
/// binaries that `cargo xtask bundle` listed in `gpu-bundle/tests.txt`.
fn test_binaries(ws: &Path) -> Result<Vec<PathBuf>> {
    let paths: Vec<PathBuf> = match std::env::var_os("SDPA_GPU_TESTS") {
        Some(list) => std::env::split_paths(&list).collect(),
        None => {
            let manifest = bundle::tests_manifest(ws);
            let text = std::fs::read_to_string(&manifest).map_err(|e| {
                format!(
                    "a GPU is present but there is no GPU test binary: cannot read {} ({e}); \
                     run `cargo xtask bundle` first, or set SDPA_GPU_TESTS=<test binary>",
                    manifest.display()
                )
            })?;
            let bin = bundle::bin_dir(ws);
            text.lines().map(str::trim).filter(|l| !l.is_empty()).map(|name| bin.join(name)).collect()
        }
    };
    if paths.is_empty() {
        return Err("a GPU is present but the list of GPU test binaries is empty".into());
    }
    if let Some(missing) = paths.iter().find(|p| !p.is_file()) {
        return Err(format!("GPU test binary {} does not exist", missing.display()));
    }
    Ok(paths)
}
