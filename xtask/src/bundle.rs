//! `cargo xtask bundle`: builds what the GPU machine runs (the test
//! executables of `sdpa-tests`, the `sdpa` CLI and this xtask) into `gpu-bundle/bin/`,
//! under stable names, and lists the test executables in
//! `gpu-bundle/tests.txt` for `cargo xtask gate`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::util::{self, Args, Result};

/// `<workspace>/gpu-bundle`.
pub fn bundle_dir(ws: &Path) -> PathBuf {
    ws.join("gpu-bundle")
}

/// `<workspace>/gpu-bundle/bin`: the bundled executables.
pub fn bin_dir(ws: &Path) -> PathBuf {
    bundle_dir(ws).join("bin")
}

/// `<workspace>/gpu-bundle/tests.txt`: the names of the bundled test executables, one a line.
pub fn tests_manifest(ws: &Path) -> PathBuf {
    bundle_dir(ws).join("tests.txt")
}

/// One executable cargo built.
struct Artifact {
    /// The target's name (`target.name`): stable, unlike the file name.
    name: String,
    /// The path cargo reported (`executable`).
    executable: PathBuf,
}

/// Runs the command.
pub fn run(args: &[String]) -> Result<()> {
    Args::new("bundle", args).finish()?;
    let ws = util::workspace();
    let bin = bin_dir(&ws);
    if bin.exists() {
        std::fs::remove_dir_all(&bin).map_err(|e| format!("cannot clear {}: {e}", bin.display()))?;
    }
    std::fs::create_dir_all(&bin).map_err(|e| format!("cannot create {}: {e}", bin.display()))?;

    let tests = artifacts(&ws, &["test", "--release", "--no-run", "-p", "sdpa-tests"], |a| {
        a["profile"]["test"] == Value::Bool(true)
    })?;
    if tests.is_empty() {
        return Err("cargo reported no test executable for sdpa-tests".into());
    }
    let mut names = Vec::new();
    for t in &tests {
        if names.contains(&t.name) {
            return Err(format!("two test executables are both named `{}`", t.name));
        }
        copy(t, &bin)?;
        names.push(t.name.clone());
    }
    let manifest = tests_manifest(&ws);
    std::fs::write(&manifest, names.join("\n") + "\n")
        .map_err(|e| format!("cannot write {}: {e}", manifest.display()))?;
    println!("listed {} test executables in {}", names.len(), manifest.display());

    let cli = artifacts(&ws, &["build", "--release", "-p", "sdpa"], |a| {
        a["profile"]["test"] == Value::Bool(false) && a["target"]["name"] == "sdpa" && a["target"]["kind"][0] == "bin"
    })?;
    let cli = cli.first().ok_or("cargo reported no `sdpa` executable")?;
    copy(cli, &bin)?;
    // This xtask too: `gpu-bundle/bin/xtask bench` runs where there is no cargo.
    let me = std::env::current_exe().map_err(|e| format!("cannot locate the xtask executable: {e}"))?;
    copy(&Artifact { name: "xtask".into(), executable: me }, &bin)
}

/// Copies `a` to `dir/<target name>` and says so.
fn copy(a: &Artifact, dir: &Path) -> Result<()> {
    let to = dir.join(&a.name);
    std::fs::copy(&a.executable, &to)
        .map_err(|e| format!("cannot copy {} to {}: {e}", a.executable.display(), to.display()))?;
    println!("copied {} -> {}", a.executable.display(), to.display());
    Ok(())
}

/// Runs `cargo <args> --message-format=json-render-diagnostics` (compiler
/// messages still reach the terminal) and returns the executables of the
/// `compiler-artifact` messages that `keep` accepts.
fn artifacts(ws: &Path, args: &[&str], keep: impl Fn(&Value) -> bool) -> Result<Vec<Artifact>> {
    let mut cmd = Command::new(util::cargo());
    cmd.current_dir(ws).args(args).arg("--message-format=json-render-diagnostics").stderr(Stdio::inherit());
    eprintln!("running {}", util::describe(&cmd));
    let stdout = util::output(&mut cmd)?;
    let mut found = Vec::new();
    for line in stdout.lines() {
        let Ok(msg) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        if msg["reason"] != "compiler-artifact" || !keep(&msg) {
            continue;
        }
        let (Some(name), Some(exe)) = (msg["target"]["name"].as_str(), msg["executable"].as_str()) else {
            continue;
        };
        found.push(Artifact { name: name.to_string(), executable: PathBuf::from(exe) });
    }
    Ok(found)
}
